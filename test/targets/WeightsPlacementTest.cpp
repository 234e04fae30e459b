//===- WeightsPlacementTest.cpp - Weights written after the link ---------===//
//
// A shared library is linked with its weights section only reserved, and
// placeWeights writes the weights where the section's addresses say: the
// library built so runs and computes with its weights (two arrays of odd
// sizes, so a wrong offset or a lost pad shows in the answer), its file is
// a valid ELF whose loaded segments stay congruent to their addresses, and
// an image whose reserved section does not match the table is refused.
//
//===----------------------------------------------------------------------===//
#include "cuvil-run/LibraryRunner.h"
#include "driver/CompileDriver.h"
#include "passes/InitAll.h"
#include "targets/CPU/Weights.h"
#include "targets/Targets.h"
#include "test/targets/TargetTestSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::cuvil;

namespace {

std::string denseList(int n, double scale, double offset) {
  std::string s = "[";
  for (int i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(offset + scale * i);
  return s + "]";
}

/// y = (x + a) * b with a: 3x37, b: 37 (odd byte counts: 444 and 148).
std::string model() {
  std::string a = "[";
  for (int r = 0; r < 3; ++r)
    a += (r ? ", " : "") + denseList(37, 0.25, r);
  a += "]";
  return "func.func @forward(%x: tensor<3x37xf32>) -> tensor<3x37xf32> {\n"
         "  %a = cuvil.constant dense<" + a + "> : tensor<3x37xf32>\n"
         "  %b = cuvil.constant dense<" + denseList(37, -0.5, 3.0) + "> : tensor<37xf32>\n"
         "  %0 = cuvil.math.add %x, %a : tensor<3x37xf32>, tensor<3x37xf32> -> tensor<3x37xf32>\n"
         "  %1 = cuvil.math.mul %0, %b : tensor<3x37xf32>, tensor<37xf32> -> tensor<3x37xf32>\n"
         "  return %1 : tensor<3x37xf32>\n}\n";
}

} // namespace

TEST_CASE("weights placed after the link are where the code reads them", "[targets][weights]") {
  std::unique_ptr<MLIRContext> owned = ::cuvil::test::compilerContext();
  MLIRContext &context = *owned;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(model(), &context);
  REQUIRE(module);

  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("cuvil-weights-test", dir));
  std::string path = std::string(dir) + "/libweights.so";
  CompileOptions options;
  options.target = "x86_64";
  auto result = compileModule(*module, options, path);
  REQUIRE(result);
  REQUIRE_FALSE(llvm::sys::fs::rename(result->libraryTempPath, path));
  CHECK(result->weightsBytes >= 444 + 148);

  auto runner = ::cuvil::LibraryRunner::load(path, 1);
  REQUIRE(runner);
  std::vector<double> xs(3 * 37);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = 0.125 * double(i % 11) - 0.5;
  ::cuvil::Tensor x = ::cuvil::Tensor::fromDoubles(::cuvil::DType::Float32, {3, 37}, xs);
  std::vector<::cuvil::Tensor> outputs;
  REQUIRE(runner->run({x}, outputs));
  REQUIRE(outputs.size() == 1);
  std::vector<double> got = outputs[0].toDoubles();
  REQUIRE(got.size() == xs.size());
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 37; ++c) {
      double want = (xs[r * 37 + c] + (r + 0.25 * c)) * (3.0 - 0.5 * c);
      INFO("row " << r << " column " << c);
      CHECK(std::abs(got[r * 37 + c] - want) <= 1e-5 * std::max(1.0, std::abs(want)));
    }

  // The file: the section holds bytes now, every loaded segment's offset is
  // congruent to its address, and the section lies inside its segment.
  auto buffer = llvm::MemoryBuffer::getFile(path);
  REQUIRE(buffer);
  auto elf = llvm::object::ELF64LEFile::create((*buffer)->getBuffer());
  REQUIRE(static_cast<bool>(elf));
  auto sections = elf->sections();
  REQUIRE(static_cast<bool>(sections));
  bool found = false;
  for (const auto &s : *sections) {
    auto name = elf->getSectionName(s);
    REQUIRE(static_cast<bool>(name));
    if (*name != ".cuvil.weights")
      continue;
    found = true;
    CHECK(s.sh_type == llvm::ELF::SHT_PROGBITS);
    CHECK(s.sh_offset % s.sh_addralign == 0);
    auto phdrs = elf->program_headers();
    REQUIRE(static_cast<bool>(phdrs));
    bool inside = false;
    for (const auto &p : *phdrs) {
      if (p.p_type != llvm::ELF::PT_LOAD)
        continue;
      CHECK(p.p_offset % p.p_align == p.p_vaddr % p.p_align);
      if (p.p_vaddr <= s.sh_addr && s.sh_addr + s.sh_size <= p.p_vaddr + p.p_filesz)
        inside = s.sh_offset - p.p_offset == s.sh_addr - p.p_vaddr;
    }
    CHECK(inside);
  }
  CHECK(found);

  // An image whose reserved section is not this table's is refused.
  WeightsTable other;
  std::vector<char> bytes(100, 1);
  other.symbols.push_back({"cuvil_weight_0", 64, llvm::ArrayRef<char>(bytes), {}});
  ::cuvil::Status refused = placeWeights((*buffer)->getBuffer(), other, std::string(dir) + "/other.so");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find(".cuvil.weights") != std::string::npos);
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("weights the code never reads, and the library still links", "[targets][weights]") {
  // An empty tensor: the index table (80 bytes, a weight) is read by no
  // instruction (lld collected the section when only such weights were in
  // it; the model's name is there now).
  std::unique_ptr<MLIRContext> owned = ::cuvil::test::compilerContext();
  MLIRContext &context = *owned;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
func.func @forward(%x: tensor<5x0x10xf32>) -> tensor<5x0x10xf32> {
  %i = cuvil.constant dense<[9, 8, 7, 6, 5, 4, 3, 2, 1, 0]> : tensor<10xi64>
  %y = cuvil.tensor.index_select %x, %i {dim = 2 : i64} : tensor<5x0x10xf32>, tensor<10xi64> -> tensor<5x0x10xf32>
  return %y : tensor<5x0x10xf32>
}
)mlir", &context);
  REQUIRE(module);
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("cuvil-weights-test", dir));
  CompileOptions options;
  options.target = "x86_64";
  auto result = compileModule(*module, options, std::string(dir) + "/libempty.so");
  REQUIRE(result);
  CHECK(result->weightsBytes == 80);
  CHECK(::cuvil::LibraryRunner::load(result->libraryTempPath, 1));
  llvm::sys::fs::remove_directories(dir);
}
