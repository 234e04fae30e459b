//===- Npy.h - NumPy .npy reader and writer ---------------------*- C++ -*-===//
//
// Tensors cross tool boundaries as NumPy .npy files (ARCHITECTURE.md §5).
// The reader treats the file as untrusted: the header is parsed strictly, the
// shape is validated before anything is allocated, and the data size must
// match exactly. Fortran-ordered arrays are transposed to row-major.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_NPY_H
#define CUVIL_SUPPORT_NPY_H

#include "support/Status.h"
#include "support/Tensor.h"

#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// What a reader expects of a file: a dtype and shape (negative dims:
/// any size); `what` names it in the message ("input 0 (x) of 'lib.so'").
struct NpyExpectation {
  std::string what;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  bool accepts(DType dtype, const std::vector<int64_t> &shape) const;
};

/// Parses the bytes of a .npy file. `name` is used in error messages.
Result<Tensor> parseNpy(std::string_view bytes, const std::string &name);
/// Reads a .npy file: its header first, checked against the file's size
/// (and `expect`, when given) before any data is read or allocated.
/// Errors carry ids (CUVIL-E-NPY-*, CUVIL-E-INPUT-SHAPE).
Result<Tensor> readNpy(const std::string &path, const NpyExpectation *expect = nullptr);
/// Serialises a tensor as .npy (format 1.0, header padded to 64 bytes).
/// bf16 has no NumPy type: callers must cast first (asserted).
std::string serializeNpy(const Tensor &t);
/// Writes a tensor to a .npy file atomically.
Status writeNpy(const std::string &path, const Tensor &t);

} // namespace cuvil

#endif // CUVIL_SUPPORT_NPY_H
