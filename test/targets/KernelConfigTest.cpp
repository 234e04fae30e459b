//===- KernelConfigTest.cpp - The CPU's kernel configurations as data -----===//
//
// What each op can take (checkKernelChoice / validKernelChoices), that the
// heuristics provider configures every kernel op with a choice it can run,
// keeps a configuration already there, and that the report describes each
// op.
//
//===----------------------------------------------------------------------===//
#include "passes/InitAll.h"
#include "targets/CPU/KernelConfig.h"
#include "targets/Targets.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

using namespace mlir;
using namespace mlir::cuvil;

namespace {

const char *kModel = R"mlir(
func.func @forward(%x: tensor<1x8x16x16xf32>, %a: tensor<16x4xf32>, %w: tensor<3x4xf32>)
    -> (tensor<1x8x16x16xf32>, tensor<1x8x14x14xf32>, tensor<16x3xf32>, tensor<16x3xf32>) {
  %w3 = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w3 stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  %w5 = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %1 = cuvil.conv.conv2d %x, %w5 stride [1, 1] padding [0, 0] dilation [1, 1] {cuvil.kernel = #cuvil.kernel<kernel = "conv2d", variant = "pixel_rows">} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x14x14xf32>
  %wl = cuvil.constant dense<0.5> : tensor<3x4xf32>
  %2 = cuvil.gemm.linear %a, %wl : (tensor<16x4xf32>, tensor<3x4xf32>) -> tensor<16x3xf32>
  %3 = cuvil.gemm.linear %a, %w : (tensor<16x4xf32>, tensor<3x4xf32>) -> tensor<16x3xf32>
  return %0, %1, %2, %3 : tensor<1x8x16x16xf32>, tensor<1x8x14x14xf32>, tensor<16x3xf32>, tensor<16x3xf32>
}
)mlir";

struct Fixture {
  Fixture() : context(registry(), MLIRContext::Threading::DISABLED) {
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(kModel, &context);
  }
  static DialectRegistry registry() {
    DialectRegistry r;
    registerAllDialects(r);
    return r;
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

} // namespace

TEST_CASE("each kernel op takes the choices its kernels can run", "[targets][kernels]") {
  Fixture f;
  REQUIRE(f.module);
  SmallVector<Operation *> ops = cpu::kernelOps(*f.module);
  REQUIRE(ops.size() == 4);
  CHECK(cpu::validKernelChoices(ops[0]) ==
        std::vector<std::string>{"conv2d/im2col", "conv2d/pixel_rows", "conv2d/winograd_f4x4",
                                 "conv2d/winograd_f2x2", "linalg"});
  CHECK(cpu::checkKernelChoice(ops[0], "depthwise_conv2d", "direct") ==
        "it is not depthwise (one input channel per group)");
  CHECK(cpu::checkKernelChoice(ops[0], "conv2d", "tiled") ==
        "kernel 'conv2d' has no variant 'tiled' (it has: im2col, pixel_rows, winograd_f4x4, "
        "winograd_f2x2)");
  CHECK(cpu::checkKernelChoice(ops[0], "linear", "weight_rows") ==
        "kernel 'linear' does not run cuvil.conv.conv2d");
  CHECK(cpu::checkKernelChoice(ops[2], "linear", "input_rows").empty());
  // Weights computed at run time: the generic lowering only.
  CHECK(cpu::validKernelChoices(ops[3]) == std::vector<std::string>{"linalg"});
  CHECK(cpu::checkKernelChoice(ops[3], "linalg", "").empty());
}

TEST_CASE("the heuristics configure every kernel op and keep a configuration present",
          "[targets][kernels]") {
  Fixture f;
  REQUIRE(f.module);
  cpu::createHeuristicProvider({})->configure(*f.module);
  SmallVector<Operation *> ops = cpu::kernelOps(*f.module);
  for (Operation *op : ops) {
    KernelConfigAttr c = cpu::kernelConfigOf(op);
    REQUIRE(c);
    CHECK(cpu::checkKernelChoice(op, c.getKernel(), c.getVariant()).empty());
  }
  CHECK(cpu::kernelConfigOf(ops[0]).getVariant() == "winograd_f4x4");
  CHECK(cpu::kernelConfigOf(ops[0]).getSource() == "heuristics");
  CHECK(cpu::kernelConfigOf(ops[1]).getVariant() == "pixel_rows"); // kept
  CHECK(cpu::kernelConfigOf(ops[1]).getSource() == "user");
  CHECK(cpu::kernelConfigOf(ops[3]).getKernel() == "linalg");
  CHECK(cpu::kernelConfigOf(ops[3]).getReason() == "no kernel: its weights are not a constant matrix");

  llvm::json::Array report = cpu::kernelReport(*f.module);
  REQUIRE(report.size() == 4);
  const llvm::json::Object &first = *report[0].getAsObject();
  CHECK(first.getString("op") == "cuvil.conv.conv2d");
  CHECK(first.getString("output") == "1x8x16x16xf32");
  CHECK(first.getString("kernel") == "conv2d");
  CHECK(first.getString("variant") == "winograd_f4x4");
  REQUIRE(first.getArray("inputs"));
  CHECK((*first.getArray("inputs"))[1].getAsString() == "8x8x3x3xf32");
}
