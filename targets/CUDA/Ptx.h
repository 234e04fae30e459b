//===- Ptx.h - LLVM IR kernels to PTX and cubins ----------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_CUDA_PTX_H
#define CUVIL_TARGETS_CUDA_PTX_H

#include "support/Status.h"

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Module.h"

#include <string>
#include <vector>

namespace mlir::cuvil::cuda {

/// "sm_80,sm_90" as a sorted list without repeats; failure for an
/// architecture the target does not compile for.
FailureOr<std::vector<std::string>> parseArchs(llvm::StringRef list);
/// The architectures --cuda-arch takes, for messages.
std::string supportedArchs();

struct KernelImage {
  enum Kind { Ptx, Cubin } kind;
  int sm; ///< 80 for sm_80
  std::string bytes;
};

struct PtxOptions {
  std::string ptxas;        ///< "" = find it; "none" = do not assemble
  bool requirePtxas = false;
};

/// The ptxas that assembles kernels ("" when none is found): `explicitPath`
/// if given, else the first of PATH, $CUDA_PATH/bin, /usr/local/cuda/bin.
std::string findPtxas(const std::string &explicitPath = "");

/// Compiles `module` (NVVM kernels `kernels` and their helpers) for each
/// architecture of `archs`: PTX from LLVM's NVPTX back end (libdevice linked
/// in for the math functions, O3), then a cubin from ptxas when there is
/// one. Images in the order of `archs`, each architecture's PTX before its
/// cubin. A PTX that ptxas rejects is an error with ptxas' message.
::cuvil::Result<std::vector<KernelImage>> compileKernels(const llvm::Module &module,
                                                         const std::vector<std::string> &kernels,
                                                         const std::vector<std::string> &archs,
                                                         const PtxOptions &options);

} // namespace mlir::cuvil::cuda

#endif // CUVIL_TARGETS_CUDA_PTX_H
