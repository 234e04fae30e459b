//===- ModelInterface.h - What a compiled model takes and gives -*- C++ -*-===//
//
// The inputs and outputs of the model function (names, dtypes, shapes),
// read from the cuvil function before lowering (its element types still
// say unsigned), and the code that turns them into the library's
// descriptor (runtime/include/cuvil/model_abi.h) in LLVM IR.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_MODELINTERFACE_H
#define CUVIL_TARGETS_MODELINTERFACE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/Module.h"

#include <string>
#include <vector>

namespace mlir::cuvil {

struct TensorSignature {
  std::string name;
  int32_t dtype = 0; ///< a cuvil_dtype
  std::vector<int64_t> shape; ///< -1: dynamic
  /// Empty, or per dimension: its bounds (a static one's: its size).
  std::vector<int64_t> minShape, maxShape;
  /// Empty, or per dimension: a dynamic one's symbol ("" for static ones).
  std::vector<std::string> symbols;
  bool isDynamic() const { return llvm::is_contained(shape, -1); }
};

struct ModelInterface {
  std::string modelName;
  std::vector<TensorSignature> inputs, outputs;
  /// Messages of the model's run-time failures (assertions), 1-based codes.
  std::vector<std::string> failureMessages;
};

/// Reads the interface of `func` (cuvil level). Fails, with an error on the
/// function, on element types the C API has no dtype for.
FailureOr<ModelInterface> readModelInterface(func::FuncOp func, llvm::StringRef modelName);

/// Where the compiled code runs and what it needs.
struct DescriptorInfo {
  std::string target;                       ///< "x86_64", "aarch64"
  std::string cpu;                          ///< tuning CPU: the descriptor's `device`
  std::vector<std::string> requiredFeatures; ///< names the runtime checks
  int64_t arenaBytes = 0;
  /// The model's name as a symbol the weights table defines
  /// (kModelNameSymbol, nameSlotBytes of the name): placed after the link,
  /// so the code does not depend on it. 0: the name is in the code.
  uint64_t modelNameSlot = 0;
  /// A library with CUDA kernels (model_abi.h's cuvil_rt_cuda_desc): the
  /// lowered host function that launches them, with the model function's
  /// arguments; "" for the others.
  std::string cudaFunction;
  bool cudaCpuFallback = false;
  std::vector<std::string> cudaKernels;
  struct CudaImage {
    bool cubin = false;
    int32_t sm = 0;
    std::string bytes;
  };
  std::vector<CudaImage> cudaImages;
};

/// Adds to `module` the hidden `cuvil_rt_model` descriptor (model ABI
/// CUVIL_RT_MODEL_ABI_VERSION) and the entry `cuvil_rt_entry(inputs,
/// input_shapes, outputs, output_shapes, arena, exec)` that unpacks the
/// pointer arrays and calls `function` (the lowered model: inputs...,
/// outputs..., arena as bare pointers; with dynamic dimensions, then an
/// i64 array of their sizes, the inputs' then the outputs' capacities,
/// which the model overwrites with the outputs' sizes: written back to the
/// output shapes). Fails when `function` is missing or takes another
/// number of arguments.
LogicalResult addModelDescriptor(llvm::Module &module, llvm::StringRef function,
                                 const ModelInterface &interface, const DescriptorInfo &info,
                                 std::string &error);

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_MODELINTERFACE_H
