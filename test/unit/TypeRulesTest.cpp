//===- TypeRulesTest.cpp - Promotion, broadcasting and verifier messages --===//
#include "CatchCompat.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace mlir::cuvil;

namespace {
struct Ctx {
  MLIRContext ctx;
  Ctx() { ctx.loadDialect<CuvilDialect, func::FuncDialect>(); }
  Type parse(StringRef s) { return parseType(s, &ctx); }
};

/// Parses `source`; returns the diagnostics it produced (empty if valid).
std::string diagnosticsOf(MLIRContext &ctx, StringRef source) {
  std::string messages;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    messages += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(source, &ctx);
  if (m && failed(verify(*m)))
    messages += "(verify failed)\n";
  return messages;
}
} // namespace

TEST_CASE("element types promote as torch.promote_types", "[ir][types]") {
  Ctx c;
  auto promote = [&](StringRef a, StringRef b) {
    return promoteElementTypes(c.parse(a), c.parse(b));
  };
  CHECK(promote("i1", "i32") == c.parse("i32"));
  CHECK(promote("ui8", "i8") == c.parse("i16"));
  CHECK(promote("ui8", "i64") == c.parse("i64"));
  CHECK(promote("i32", "i64") == c.parse("i64"));
  CHECK(promote("i64", "f16") == c.parse("f16"));
  CHECK(promote("f16", "bf16") == c.parse("f32"));
  CHECK(promote("bf16", "f64") == c.parse("f64"));
  CHECK(promote("f32", "f32") == c.parse("f32"));
}

TEST_CASE("0-d operands take part in promotion with lower priority", "[ir][types]") {
  Ctx c;
  auto result = [&](StringRef a, StringRef b) {
    return resultElementType({c.parse(a), c.parse(b)});
  };
  CHECK(result("tensor<3xf32>", "tensor<f64>") == c.parse("f32"));
  CHECK(result("tensor<3xi64>", "tensor<f64>") == c.parse("f64"));
  CHECK(result("tensor<3xi32>", "tensor<i64>") == c.parse("i32"));
  CHECK(result("tensor<3xi1>", "tensor<i64>") == c.parse("i64"));
  CHECK(result("tensor<f32>", "tensor<f64>") == c.parse("f64"));
  CHECK(result("tensor<3xi32>", "tensor<3xi64>") == c.parse("i64"));
}

TEST_CASE("shapes broadcast as in NumPy", "[ir][shapes]") {
  SmallVector<int64_t> out;
  REQUIRE(succeeded(broadcastShapes({2, 1, 3}, {4, 1}, out)));
  CHECK(out == SmallVector<int64_t>{2, 4, 3});
  REQUIRE(succeeded(broadcastShapes({}, {5}, out)));
  CHECK(out == SmallVector<int64_t>{5});
  REQUIRE(succeeded(broadcastShapes({ShapedType::kDynamic, 3}, {7, 1}, out)));
  CHECK(out == SmallVector<int64_t>{7, 3});
  CHECK(failed(broadcastShapes({2, 3}, {4, 3}, out)));
}

TEST_CASE("window and slice sizes follow PyTorch", "[ir][shapes]") {
  CHECK(*windowOutputSize(224, 7, 2, 3, 1, false) == 112);
  CHECK(*windowOutputSize(112, 3, 2, 1, 1, false) == 56);
  CHECK(*windowOutputSize(5, 2, 2, 0, 1, true) == 3);
  CHECK(*windowOutputSize(4, 2, 2, 1, 1, true) == 3);
  CHECK(!windowOutputSize(2, 5, 1, 0, 1, false));
  CHECK(sliceLength(10, 0, INT64_MAX, 1) == 10);
  CHECK(sliceLength(10, -3, INT64_MAX, 1) == 3);
  CHECK(sliceLength(10, 1, -1, 3) == 3);
  CHECK(sliceLength(10, 8, 2, 1) == 0);
  CHECK(sliceLength(10, -100, 100, INT64_MAX) == 1);
}

TEST_CASE("the verifier names the broken rule", "[ir][verifier]") {
  Ctx c;
  CHECK(diagnosticsOf(c.ctx, R"(
    func.func @ok(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
      %0 = cuvil.math.add %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })").empty());
  std::string d = diagnosticsOf(c.ctx, R"(
    func.func @bad(%x: tensor<2x3xf32>, %y: tensor<4xf32>) -> tensor<2x3xf32> {
      %0 = cuvil.math.add %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })");
  CHECK(d.find("operand shapes 2x3 and 4 do not broadcast") != std::string::npos);
  d = diagnosticsOf(c.ctx, R"(
    func.func @bad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
      %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1]
          : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
      return %0 : tensor<1x4x6x6xf32>
    })");
  CHECK(d.find("weight expects 2 input channels") != std::string::npos);
}
