//===- CostModel.h - Ranking kernel configurations without the device -*- C++ -*-===//
//
// For a device at hand in no other way (a named profile, no --runner): an
// estimate of the seconds a configuration takes, from the profile's peaks
// and bandwidth: the products' multiply-adds over the lanes the kernel
// fills, Winograd's products and transforms, the bytes it streams. It ranks
// candidates; its numbers are not predictions.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_AUTOTUNE_COSTMODEL_H
#define CUVIL_AUTOTUNE_COSTMODEL_H

#include "targets/CPU/KernelConfig.h"
#include "tuning/DeviceProfile.pb.h"

namespace cuvil::tuning {

/// Seconds `choice` would take for `op` on `profile` with `threads` cores.
double estimateSeconds(mlir::Operation *op, const mlir::cuvil::cpu::KernelChoice &choice,
                       const DeviceProfile &profile, int threads);

} // namespace cuvil::tuning

#endif // CUVIL_AUTOTUNE_COSTMODEL_H
