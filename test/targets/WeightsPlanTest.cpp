//===- WeightsPlanTest.cpp - New weights replayed onto cached code -------===//
//
// A model built into a cache leaves a weights plan; the same model with new
// weights is then built from it (plan.hits) and is byte for byte the
// library a cold build of the new model makes: the Winograd-packed
// convolution with a batch norm folded into it, the panels of a linear
// layer, a weight transposed by constant folding (the "evaluate"
// transform) and a batch norm's scale and shift (on an input: no
// producer to fold into) are all made again from the new tensors. A model that differs in a small tensor (a bias of 32 bytes:
// part of the structure) is compiled, and is again its cold build's bytes.
// A model saved under another name, exported to another output, is served
// by the same plan (the model's name and the SONAME are placed after the
// link, in slots). A plan entry that does not fit (corrupt, another
// machine's image) is a miss, never a wrong library.
//
//===----------------------------------------------------------------------===//
#include "cache/CompileCache.h"
#include "driver/CompileDriver.h"
#include "targets/Targets.h"
#include "test/targets/TargetTestSupport.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

using namespace mlir::cuvil;
namespace cache = ::cuvil::cache;
using ::cuvil::test::fileContents;

namespace {

/// A resource's text: the alignment (4), then the floats' bytes in hex.
std::string floatsHex(size_t n, float scale, float offset) {
  std::string hex = "0x04000000";
  for (size_t i = 0; i < n; ++i) {
    float v = offset + scale * float((i * 37) % 101) / 101.0f;
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    for (uint8_t x : b) {
      static const char *digits = "0123456789ABCDEF";
      hex += digits[x >> 4];
      hex += digits[x & 15];
    }
  }
  return hex;
}

std::string model(float weightScale, float biasOffset) {
  return R"(func.func @forward(%x: tensor<1x8x16x16xf32>, %v: tensor<4x24xf32>) -> (tensor<1x8x16x16xf32>, tensor<4x12xf32>) {
  %w = cuvil.constant dense_resource<conv_w> : tensor<8x8x3x3xf32>
  %b = cuvil.constant dense_resource<conv_b> : tensor<8xf32>
  %c = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %cm = cuvil.constant dense_resource<bn_mean> : tensor<8xf32>
  %cv = cuvil.constant dense_resource<bn_var> : tensor<8xf32>
  %cg = cuvil.constant dense_resource<bn_gamma> : tensor<8xf32>
  %cb = cuvil.constant dense_resource<bn_beta> : tensor<8xf32>
  %cn = cuvil.norm.batch_norm %c, %cm, %cv weight %cg bias %cb {eps = 1.0e-05 : f64} : (tensor<1x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %m2 = cuvil.constant dense_resource<bn2_mean> : tensor<24xf32>
  %v2 = cuvil.constant dense_resource<bn2_var> : tensor<24xf32>
  %vn = cuvil.norm.batch_norm %v, %m2, %v2 {eps = 1.0e-05 : f64} : (tensor<4x24xf32>, tensor<24xf32>, tensor<24xf32>) -> tensor<4x24xf32>
  %lw = cuvil.constant dense_resource<lin_w> : tensor<24x12xf32>
  %t = cuvil.shape.transpose %lw {dim0 = 0 : i64, dim1 = 1 : i64} : tensor<24x12xf32> -> tensor<12x24xf32>
  %y = cuvil.gemm.linear %vn, %t : (tensor<4x24xf32>, tensor<12x24xf32>) -> tensor<4x12xf32>
  return %cn, %y : tensor<1x8x16x16xf32>, tensor<4x12xf32>
}
{-# dialect_resources: { builtin: {
  conv_w: ")" + floatsHex(8 * 8 * 9, weightScale, -0.5f * weightScale) + R"(",
  conv_b: ")" + floatsHex(8, 0.1f, biasOffset) + R"(",
  bn_mean: ")" + floatsHex(8, 0.2f, -0.1f) + R"(",
  bn_var: ")" + floatsHex(8, 0.5f, 1.0f) + R"(",
  bn_gamma: ")" + floatsHex(8, 0.3f, 0.9f) + R"(",
  bn_beta: ")" + floatsHex(8, 0.1f, 0.0f) + R"(",
  bn2_mean: ")" + floatsHex(24, weightScale, -0.25f) + R"(",
  bn2_var: ")" + floatsHex(24, weightScale, 1.0f) + R"(",
  lin_w: ")" + floatsHex(24 * 12, -weightScale, 0.25f) + R"("
} } #-}
)";
}

/// The DT_SONAME of the library `bytes`, or "" when it has none (or is no
/// ELF file).
std::string sonameOf(const std::string &bytes) {
  auto elf = llvm::object::ELF64LEFile::create(bytes);
  if (!elf) {
    llvm::consumeError(elf.takeError());
    return "";
  }
  auto entries = elf->dynamicEntries();
  auto sections = elf->sections();
  if (!entries || !sections) {
    llvm::consumeError(entries.takeError());
    llvm::consumeError(sections.takeError());
    return "";
  }
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_DYNAMIC)
      continue;
    auto strings = elf->getLinkAsStrtab(section);
    if (!strings) {
      llvm::consumeError(strings.takeError());
      return "";
    }
    for (const auto &d : *entries)
      if (d.d_tag == llvm::ELF::DT_SONAME && d.getVal() < strings->size())
        return strings->data() + d.getVal();
  }
  return "";
}

void write(const std::string &path, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  REQUIRE_FALSE(ec);
  os << text;
}

} // namespace

TEST_CASE("compile cache: a model with new weights is built from its structure's weights plan",
          "[cache][weights]") {
  registerAllTargets();
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("cuvil-weights-plan", dir));
  std::string root(dir);
  CompileOptions options;
  options.target = "x86_64";
  options.soname = "libplan.so";
  options.cacheDir = root + "/cache";
  // One model file, rewritten.
  auto build = [&](const std::string &name, const std::string &text, bool cached) {
    write(root + "/model.mlir", text);
    CompileOptions o = options;
    o.model = root + "/model.mlir";
    o.output = root + "/" + name + (cached ? "" : ".cold") + ".so";
    if (!cached)
      o.cacheDir.clear();
    REQUIRE(compile(o));
    return fileContents(o.output);
  };
  auto planHits = [&] { return cache::directoryStats(options.cacheDir).counters["plan.hits"]; };

  std::string a = build("a", model(1.0f, 0.0f), true);
  CHECK(cache::directoryStats(options.cacheDir).entries[int(cache::EntryKind::WeightsPlan)] == 1);
  CHECK(planHits() == 0);

  // New weights: made by the plan, the bytes of a cold build.
  std::string b = build("b", model(2.5f, 0.0f), true);
  CHECK(planHits() == 1);
  CHECK(b != a);
  CHECK(b == build("b", model(2.5f, 0.0f), false));

  // A new small tensor (part of the structure): compiled, still exact.
  std::string c = build("c", model(2.5f, 0.5f), true);
  CHECK(planHits() == 1);
  CHECK(c == build("c", model(2.5f, 0.5f), false));

  // A fine-tuned model saved under a new name, exported to a new output
  // with the default SONAME: the model's name and the SONAME are placed
  // in their slots, so the plan serves, byte for byte a cold build's.
  auto buildAs = [&](const std::string &modelFile, const std::string &output, const std::string &text, bool cached) {
    REQUIRE_FALSE(llvm::sys::fs::create_directories(root + "/cold"));
    write(root + "/" + modelFile, text);
    CompileOptions o = options;
    o.soname.clear();
    o.model = root + "/" + modelFile;
    o.output = root + (cached ? "/" : "/cold/") + output;
    if (!cached)
      o.cacheDir.clear();
    REQUIRE(compile(o));
    return fileContents(o.output);
  };
  buildAs("model.mlir", "libinference.so", model(1.0f, 0.0f), true);
  int64_t hitsBefore = planHits();
  std::string renamed = buildAs("model_finetuned_v2.mlir", "libmodel_v2.so", model(4.0f, 0.0f), true);
  CHECK(planHits() == hitsBefore + 1);
  CHECK(renamed == buildAs("model_finetuned_v2.mlir", "libmodel_v2.so", model(4.0f, 0.0f), false));
  CHECK(sonameOf(renamed) == "libmodel_v2.so");
  CHECK(renamed.find("model_finetuned_v2") != std::string::npos);
  // A name past its slot (64 bytes): another plan key, compiled, exact.
  std::string longName(80, 'n');
  std::string longer = buildAs(longName + ".mlir", "libmodel_v2.so", model(5.0f, 0.0f), true);
  CHECK(planHits() == hitsBefore + 1);
  CHECK(longer == buildAs(longName + ".mlir", "libmodel_v2.so", model(5.0f, 0.0f), false));

  // A plan entry that does not fit is a miss: the build compiles.
  std::string elf = fileContents(root + "/a.so");
  for (const std::string &bad : {std::string("cuvil-weights-plan 1 5\n{}"), std::string("garbage"),
                                 "cuvil-weights-plan 1 2\n{}" + elf}) {
    INFO(bad.substr(0, 24));
    REQUIRE_FALSE(llvm::sys::fs::remove_directories(options.cacheDir));
    build("a", model(1.0f, 0.0f), true); // the plan of a's structure
    // Every plan entry replaced by `bad` under its own key.
    for (const cache::EntryInfo &e : cache::listEntries(options.cacheDir))
      if (e.kind == "plan") {
        cache::CompileCache c(cache::CacheOptions{options.cacheDir, "", uint64_t(1) << 30});
        c.store(cache::EntryKind::WeightsPlan, e.material, bad);
      }
    std::string d = build("d", model(3.0f, 0.0f), true);
    CHECK(d == build("d", model(3.0f, 0.0f), false));
  }
  llvm::sys::fs::remove_directories(root);
}
