//===- InitAll.cpp - Register Cuvil's dialects and passes -----------------===//
#include "passes/InitAll.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "passes/Conversion/Passes.h"
#include "passes/GraphPipeline.h"
#include "quantize/QuantizeLayers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::cuvil::registerAllDialects(DialectRegistry &registry) {
  registry.insert<CuvilDialect, arith::ArithDialect, func::FuncDialect,
                  scf::SCFDialect, tensor::TensorDialect, linalg::LinalgDialect,
                  math::MathDialect>();
}

void mlir::cuvil::registerAllPasses() {
  mlir::registerTransformsPasses();
  registerCuvilTransformsPasses();
  registerGraphPipeline();
  registerConversionPasses();
  registerQuantizePasses();
}
