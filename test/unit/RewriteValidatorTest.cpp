//===- RewriteValidatorTest.cpp - Z3 checks of rewrites, by hand ----------===//
#include "CatchCompat.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "verify/RewriteValidator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace ::cuvil::verify;

namespace {

/// A parsed module whose cuvil ops tests pick by position.
struct Module {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;

  explicit Module(StringRef source) {
    ctx.loadDialect<mlir::cuvil::CuvilDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(source, &ctx);
    REQUIRE(module);
  }
  /// The `index`-th cuvil op (constants included), in order.
  Operation *op(size_t index) {
    std::vector<Operation *> all;
    module->walk([&](Operation *o) {
      if (o->getDialect() && o->getDialect()->getNamespace() == "cuvil")
        all.push_back(o);
    });
    REQUIRE(index < all.size());
    return all[index];
  }
};

constexpr const char *kRelu = R"mlir(
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r0 = cuvil.act.relu %x : tensor<2x3xf32>
  %r1 = cuvil.act.relu %r0 : tensor<2x3xf32>
  return %r0, %r1 : tensor<2x3xf32>, tensor<2x3xf32>
}
)mlir";

} // namespace

TEST_CASE("relu(relu(x)) is relu(x), bit for bit", "[verify]") {
  Module m(kRelu);
  RewriteValidator v({});
  Outcome o = v.validate(m.op(1), m.op(0)->getResults(), Claim::Exact);
  CHECK(o.verdict == Verdict::Proved);
  CHECK(o.arithmetic == Arithmetic::IEEE);
}

TEST_CASE("relu(x) is not x: the counterexample is a negative input", "[verify]") {
  Module m(kRelu);
  RewriteValidator v({});
  Outcome o = v.validate(m.op(0), m.op(0)->getOperands(), Claim::Exact);
  REQUIRE(o.verdict == Verdict::Refuted);
  CHECK(o.detail.find("the op gives 0.0 and its replacement -") != std::string::npos);
}

TEST_CASE("x + 0.0 is not x (signed zero); x + -0.0 is", "[verify]") {
  Module m(R"mlir(
func.func @f(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  %pz = cuvil.constant dense<0.0> : tensor<f16>
  %nz = cuvil.constant dense<-0.0> : tensor<f16>
  %a = cuvil.math.add %x, %pz : tensor<4xf16>, tensor<f16> -> tensor<4xf16>
  %b = cuvil.math.add %x, %nz : tensor<4xf16>, tensor<f16> -> tensor<4xf16>
  return %a, %b : tensor<4xf16>, tensor<4xf16>
}
)mlir");
  RewriteValidator v({});
  Value x = m.op(2)->getOperand(0);
  Outcome plus = v.validate(m.op(2), x, Claim::Exact);
  REQUIRE(plus.verdict == Verdict::Refuted);
  CHECK(plus.detail.find("%arg0 = -0.0") != std::string::npos);
  CHECK(v.validate(m.op(3), x, Claim::Exact).verdict == Verdict::Proved);
}

TEST_CASE("exp(x) / sum(exp(x)) is softmax in real arithmetic only", "[verify]") {
  Module m(R"mlir(
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %e = cuvil.math.exp %x : tensor<2x3xf32>
  %s = cuvil.reduce.sum %e dims [1] keepdim : tensor<2x3xf32> -> tensor<2x1xf32>
  %y = cuvil.math.div %e, %s : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>
  %z = cuvil.act.softmax %x {dim = 1 : i64} : tensor<2x3xf32>
  return %y, %z : tensor<2x3xf32>, tensor<2x3xf32>
}
)mlir");
  RewriteValidator v({});
  Outcome real = v.validate(m.op(2), m.op(3)->getResults(), Claim::Algebraic);
  CHECK(real.verdict == Verdict::Proved);
  CHECK(real.arithmetic == Arithmetic::Real);
  // In IEEE arithmetic the softmax op is a function the solver knows
  // nothing about: equal to exp/sum is not provable.
  CHECK(v.validate(m.op(2), m.op(3)->getResults(), Claim::Exact).verdict != Verdict::Proved);
}

TEST_CASE("permute(permute(x)) composes; a wrong composition is refuted", "[verify]") {
  Module m(R"mlir(
func.func @f(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  %a = cuvil.shape.permute %x {dims = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %b = cuvil.shape.permute %a {dims = array<i64: 1, 2, 0>} : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  %c = cuvil.shape.permute %x {dims = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %d = cuvil.shape.reshape %x {shape = array<i64: 4, 2, 3>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  return %b, %c, %d : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>
}
)mlir");
  RewriteValidator v({});
  CHECK(v.validate(m.op(1), m.op(2)->getResults(), Claim::Exact).verdict == Verdict::Proved);
  Outcome wrong = v.validate(m.op(1), m.op(3)->getResults(), Claim::Exact);
  REQUIRE(wrong.verdict == Verdict::Refuted);
  CHECK(wrong.detail.find("at index [") != std::string::npos);
}

TEST_CASE("a replacement of another type is refuted without the solver", "[verify]") {
  Module m(R"mlir(
func.func @f(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  %r = cuvil.shape.reshape %x {shape = array<i64: 2, 2>} : tensor<4xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
)mlir");
  RewriteValidator v({});
  Outcome o = v.validate(m.op(0), m.op(0)->getOperands(), Claim::Exact);
  REQUIRE(o.verdict == Verdict::Refuted);
  CHECK(o.detail.find("the replacement has type") != std::string::npos);
}
