//===- DeviceProfiles.h - Device profiles: built in, read, measured -*- C++ -*-===//
//
// A device profile (DeviceProfile.proto) names a kind of machine: the CPU
// code generation targets, its features, cores, caches and peaks. Users
// name a built-in one (`--device-profile znver4`) or give a file that
// `cuvil-autotune profile` measured on their machine. No MLIR here.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TUNING_DEVICEPROFILES_H
#define CUVIL_TUNING_DEVICEPROFILES_H

#include "support/Status.h"
#include "tuning/DeviceProfile.pb.h"

#include <string>
#include <vector>

namespace cuvil::tuning {

inline constexpr uint32_t kDeviceProfileVersion = 1;

/// The built-in profiles' names, in order.
std::vector<std::string> builtinProfileNames();
/// The built-in profile `name`, or an error listing them.
Result<DeviceProfile> builtinProfile(const std::string &name);
/// `nameOrFile`: a built-in name, else a .textproto or binary profile file.
Result<DeviceProfile> loadDeviceProfile(const std::string &nameOrFile);
/// Checks a profile's version and fields (`what` names it in messages).
Status checkDeviceProfile(const DeviceProfile &profile, const std::string &what);
/// Text for .textproto/.pbtxt paths, else binary; written atomically.
Status writeDeviceProfile(const std::string &path, const DeviceProfile &profile);

/// This machine, measured (peaks take about `quick ? 1.5 : 4` seconds).
Result<DeviceProfile> measureHostProfile(bool quick);

/// The LLVM feature string code generation takes ("+avx512f,+fma"), or ""
/// for the CPU's own features.
std::string featureString(const DeviceProfile &profile);

/// Whether `path` names a text-format Protobuf file.
bool isTextProtoPath(const std::string &path);

} // namespace cuvil::tuning

#endif // CUVIL_TUNING_DEVICEPROFILES_H
