//===- CacheSafetyTest.cpp - The driver serves only its own libraries -----===//
//
// Entries forged with a valid header under the right key (the header's
// digest is no proof of origin) must still not be served: a library from
// the cache must be an ELF shared object of the target's machine that names
// this build in its .cuvil.identity section.
//
//===----------------------------------------------------------------------===//
#include "cache/CompileCache.h"
#include "driver/CompileDriver.h"
#include "targets/Targets.h"
#include "test/targets/TargetTestSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

#include <string>

using namespace mlir::cuvil;
namespace cache = ::cuvil::cache;
using ::cuvil::test::fileContents;

TEST_CASE("compile cache: a forged or foreign library under the right key is not served", "[cache]") {
  registerAllTargets();
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("cuvil-cache-safety", dir));
  CompileOptions options;
  options.model = std::string(CUVIL_SOURCE_DIR) + "/examples/mlp/model.pt";
  options.inputShapes = {"0=2x8xf32"};
  options.soname = "libmlp.so";
  options.cacheDir = std::string(dir) + "/cache";
  options.output = std::string(dir) + "/cold.so";
  REQUIRE(compile(options));
  std::string cold = fileContents(options.output);

  std::optional<cache::KeyMaterial> key = outputKeyMaterial(options);
  REQUIRE(key);
  auto forge = [&](const std::string &payload) {
    cache::CompileCache c(cache::CacheOptions{options.cacheDir, "", uint64_t(1) << 30});
    c.store(cache::EntryKind::Library, *key, payload);
    REQUIRE(c.lookup(cache::EntryKind::Library, *key)); // the header itself is fine
  };
  std::vector<std::pair<std::string, std::string>> forgeries = {
      {"libz", fileContents("/usr/lib/x86_64-linux-gnu/libz.so.1")},
      {"garbage", std::string(4096, 'x')},
  };
  // Another Cuvil library (other shapes): a real library of another build.
  CompileOptions other = options;
  other.inputShapes = {"0=1x8xf32"};
  other.cacheDir.clear();
  other.output = std::string(dir) + "/other.so";
  REQUIRE(compile(other));
  forgeries.push_back({"another build", fileContents(other.output)});

  for (const auto &[name, payload] : forgeries) {
    INFO(name);
    forge(payload);
    options.output = std::string(dir) + "/served.so";
    REQUIRE(compile(options));
    CHECK(fileContents(options.output) == cold);
  }
  llvm::sys::fs::remove_directories(dir);
}
