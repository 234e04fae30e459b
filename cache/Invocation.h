//===- Invocation.h - What a tool run is, for the no-start check --*- C++ -*-===//
//
// A build that changed nothing should cost what `make` costs, not the
// compiler's start (60 ms of relocating and initialising LLVM and MLIR).
// bin/cuvil-export is a small launcher that answers such a build itself and
// starts the compiler otherwise (ccache's "direct mode", for a compiler
// with the cache inside):
//
// - the compiler records, with each build of an output, the digest of the
//   invocation (the command line, the working directory, the environment
//   the compile reads, the host CPU) and the state on disk of every file the
//   build read or wrote ("watch" parts: the model, plugins, the tuning
//   database, the compiler and its runtime archives, the side outputs);
// - the launcher computes the same digest and stats the same files: when
//   all agree with the record of the output and the output is as that build
//   left it, the output is up to date. A file's state includes its change
//   time, which nobody can set back.
//
// Anything that differs (a flag, a variable, a touched file, another CPU),
// and anything the launcher cannot read, starts the compiler, which decides
// with the whole key as before.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CACHE_INVOCATION_H
#define CUVIL_CACHE_INVOCATION_H

#include "cache/Entry.h"

#include <string>
#include <vector>

namespace cuvil::cache {

/// What identifies the host CPU to a compile for it (the CPU's name and
/// features, its caches): CPUID's leaves on x86-64 (the feature leaves,
/// the enabled state from XGETBV, the brand string), the hardware
/// capabilities and /proc/cpuinfo elsewhere, and cpu0's cache sizes.
std::string hostFingerprint();

/// The digest of an invocation: `args` (without the program's name), the
/// working directory, the environment variables a compile reads (CUVIL_*,
/// CUDA_PATH, PATH, LD_LIBRARY_PATH), the host fingerprint and the record's
/// format.
std::string invocationDigest(const std::vector<std::string> &args);

/// A file's state as a "watch" part's value: "<state> <path>", the state
/// being device, inode, size, modification and change times (ns), or "-"
/// for a path that is not a regular file.
std::string watchValue(const std::string &path);
/// The path and the recorded state of a "watch" part's value.
bool parseWatchValue(const std::string &value, std::string &path, std::string &state);
/// The state alone, as in watchValue ("" for a path that is not a regular
/// file).
std::string fileStateText(const std::string &path);

/// True when the file of each "watch=" part of `record` is as recorded.
bool watchedFilesUnchanged(const KeyMaterial &record);

/// Parts a build record holds beside its key: how the build went (code,
/// weights), what the files were like (model-file, output-file, watch),
/// the invocation.
bool isBuildRecordPart(const std::string &part);
/// The key material of a build record: its parts without those.
KeyMaterial keyOfRecord(const KeyMaterial &record);

/// A part's value in `m` ("" when absent).
std::string partValue(const KeyMaterial &m, const std::string &name);

} // namespace cuvil::cache

#endif // CUVIL_CACHE_INVOCATION_H
