//===- EvaluatorTest.cpp - Reference evaluator on hand-computed cases -----===//
//
// Small cases whose answers are worked out by hand; the systematic
// comparison with PyTorch lives in test/reference.
//
//===----------------------------------------------------------------------===//
#include "CatchCompat.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "dialects/Cuvil/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using mlir::cuvil::reference::Tensor;
namespace ref = mlir::cuvil::reference;
using ::cuvil::DType;

namespace {
struct Evaluated {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  std::unique_ptr<ScopedDiagnosticHandler> handler;

  explicit Evaluated(StringRef source) {
    ctx.loadDialect<mlir::cuvil::CuvilDialect, func::FuncDialect,
                    tensor::TensorDialect>();
    handler = std::make_unique<ScopedDiagnosticHandler>(&ctx, [this](Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(source, &ctx);
  }
  FailureOr<SmallVector<Tensor>> run(ArrayRef<Tensor> inputs) {
    auto f = *module->getOps<func::FuncOp>().begin();
    return ref::evaluateFunction(f, inputs);
  }
};

Tensor f32(std::vector<int64_t> shape, std::vector<double> v) {
  return Tensor::fromDoubles(DType::Float32, std::move(shape), v);
}
Tensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return Tensor::fromInts(DType::Int64, std::move(shape), v);
}
} // namespace

TEST_CASE("linear + relu on hand-computed values", "[reference]") {
  Evaluated e(R"(
    func.func @f(%x: tensor<1x2xf32>, %w: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<1x2xf32> {
      %0 = cuvil.gemm.linear %x, %w, %b : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
      %1 = cuvil.act.relu %0 : tensor<1x2xf32>
      return %1 : tensor<1x2xf32>
    })");
  REQUIRE(e.module);
  auto r = e.run({f32({1, 2}, {1, 2}), f32({2, 2}, {1, 1, -1, -1}), f32({2}, {0.5, 0.5})});
  REQUIRE(succeeded(r));
  CHECK((*r)[0].getDouble(0) == 3.5);
  CHECK((*r)[0].getDouble(1) == 0.0); // -3 + 0.5 clipped
}

TEST_CASE("integer division follows PyTorch's rounding modes", "[reference]") {
  Evaluated e(R"(
    func.func @f(%a: tensor<4xi64>, %b: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xf32>, tensor<4xi64>) {
      %0 = cuvil.math.div %a, %b {rounding_mode = #cuvil<rounding_mode trunc>} : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
      %1 = cuvil.math.div %a, %b {rounding_mode = #cuvil<rounding_mode floor>} : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
      %2 = cuvil.math.div %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xf32>
      %3 = cuvil.math.remainder %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
      return %0, %1, %2, %3 : tensor<4xi64>, tensor<4xi64>, tensor<4xf32>, tensor<4xi64>
    })");
  REQUIRE(e.module);
  auto r = e.run({i64({4}, {7, -7, 7, -7}), i64({4}, {2, 2, -2, -2})});
  REQUIRE(succeeded(r));
  CHECK((*r)[0].toInts() == std::vector<int64_t>{3, -3, -3, 3});
  CHECK((*r)[1].toInts() == std::vector<int64_t>{3, -4, -4, 3});
  CHECK((*r)[2].toDoubles() == std::vector<double>{3.5, -3.5, -3.5, 3.5});
  CHECK((*r)[3].toInts() == std::vector<int64_t>{1, 1, -1, -1});
}

TEST_CASE("run-time errors are diagnosed at the op", "[reference]") {
  Evaluated e(R"(
    func.func @f(%x: tensor<3xf32>, %i: tensor<2xi64>) -> tensor<2xf32> {
      %0 = cuvil.tensor.index_select %x, %i {dim = 0 : i64} : tensor<3xf32>, tensor<2xi64> -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })");
  REQUIRE(e.module);
  CHECK(succeeded(e.run({f32({3}, {1, 2, 3}), i64({2}, {0, -1})})));
  CHECK(failed(e.run({f32({3}, {1, 2, 3}), i64({2}, {0, 3})})));
  CHECK(e.diagnostics.find("index_select index 3 is out of range for size 3") !=
        std::string::npos);
}

TEST_CASE("inputs are checked against the signature", "[reference]") {
  Evaluated e(R"(
    func.func @f(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
      %0 = cuvil.act.tanh %x : tensor<?x3xf32>
      return %0 : tensor<?x3xf32>
    })");
  REQUIRE(e.module);
  CHECK(succeeded(e.run({f32({2, 3}, {0, 0, 0, 0, 0, 0})})));
  CHECK(succeeded(e.run({f32({0, 3}, {})})));
  CHECK(failed(e.run({f32({2, 2}, {0, 0, 0, 0})})));
  INFO(e.diagnostics);
  CHECK(e.diagnostics.find("input 0: expected 'tensor<?x3xf32>', got 2x2xf32") !=
        std::string::npos);
  CHECK(failed(e.run({})));
  CHECK(failed(e.run({Tensor::fromInts(DType::Int32, {1, 3}, {0, 0, 0})})));
}

TEST_CASE("constant folding uses the evaluator's values", "[reference][passes]") {
  Evaluated e(R"(
    func.func @f() -> tensor<3xi64> {
      %a = cuvil.constant dense<[1, 2, 3]> : tensor<3xi64>
      %b = cuvil.constant dense<10> : tensor<i64>
      %0 = cuvil.math.mul %a, %b : tensor<3xi64>, tensor<i64> -> tensor<3xi64>
      return %0 : tensor<3xi64>
    })");
  REQUIRE(e.module);
  PassManager pm(&e.ctx);
  pm.addNestedPass<func::FuncOp>(mlir::cuvil::createCuvilFoldConstantsPass());
  REQUIRE(succeeded(pm.run(*e.module)));
  auto f = *e.module->getOps<func::FuncOp>().begin();
  int ops = 0;
  f.walk([&](mlir::cuvil::ConstantOp) { ++ops; });
  CHECK(ops == 1);
  auto r = e.run({});
  REQUIRE(succeeded(r));
  CHECK((*r)[0].toInts() == std::vector<int64_t>{10, 20, 30});
}
