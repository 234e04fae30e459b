//===- Npz.h - NumPy .npz archives (numpy.savez) ----------------*- C++ -*-===//
//
// An .npz is a zip of .npy arrays. Reading goes through the hardened zip
// reader (ZipArchive: stored and deflated entries, sizes and CRCs
// checked); writing stores the arrays uncompressed, as numpy.savez does.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_NPZ_H
#define CUVIL_FRONTEND_TORCHSCRIPT_NPZ_H

#include "support/Status.h"
#include "support/Tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace cuvil {

/// The arrays of `path` with their names (without ".npy"). Arrays named
/// input<N> or arr_<N> (numpy.savez's default) are ordered by N; other
/// names keep the archive's order. An entry that is not an .npy array, or
/// an archive without arrays, is an error naming the file.
Result<std::vector<std::pair<std::string, Tensor>>> readNpz(const std::string &path);

/// `arrays` as an .npz at `path` (numpy.load reads it), atomically.
Status writeNpz(const std::string &path, const std::vector<std::pair<std::string, Tensor>> &arrays);

} // namespace cuvil

#endif // CUVIL_FRONTEND_TORCHSCRIPT_NPZ_H
