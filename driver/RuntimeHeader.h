//===- RuntimeHeader.h - The C API header every library implements -*- C++ -*-===//
#ifndef CUVIL_DRIVER_RUNTIMEHEADER_H
#define CUVIL_DRIVER_RUNTIMEHEADER_H

namespace mlir::cuvil {

/// runtime/include/cuvil/runtime.h, for `cuvil-export --emit-header`.
const char *runtimeHeaderText();

} // namespace mlir::cuvil

#endif // CUVIL_DRIVER_RUNTIMEHEADER_H
