//===- Weights.h - The weights as an object of their own --------*- C++ -*-===//
//
// The model's large constants leave the code (extractWeights: the LLVM
// dialect's globals become external hidden declarations) and are written as
// one relocatable ELF object holding a `.cuvil.weights` section
// (weightsObject), written byte for byte rather than through LLVM's
// AsmPrinter, which emits arrays element by element. The code object is then
// the same for every set of weights of a graph.
//
// A shared library is linked with the section only reserved (SHT_NOBITS:
// lld lays out its addresses and never copies a byte of it), and
// placeWeights then writes the linked image with the weights in that place:
// a hundred megabytes of weights are copied once, into the output.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_WEIGHTS_H
#define CUVIL_TARGETS_CPU_WEIGHTS_H

#include "targets/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include "support/Status.h"

#include <cstdint>
#include <string>

namespace mlir::cuvil {

/// Dense arrays of fewer bytes stay in the code (resources, the model's
/// tensors, always leave it).
constexpr uint64_t kMinWeightBytes = 64;

/// Moves every weight of `module` into `table` (in module order, renamed
/// cuvil_weight_N); their bytes stay owned by the module's context.
void extractWeights(ModuleOp module, WeightsTable &table);

/// Whether a weights object holds the weights' bytes or reserves their
/// place for placeWeights.
enum class WeightsBytes { Included, Reserved };

/// The ELF relocatable object (ELF64, little-endian; `machine` an e_machine:
/// 62 x86-64, 183 AArch64) defining `table`'s symbols as hidden objects in
/// one read-only `.cuvil.weights` section, and the table's identity in a
/// section `.cuvil.identity` that is not loaded.
std::string weightsObject(const WeightsTable &table, uint16_t machine,
                          WeightsBytes bytes = WeightsBytes::Included);

/// Writes to `path` the shared library `image` (linked with `table`'s
/// Reserved object) with the table's bytes in the reserved section: the
/// section becomes file-backed where its segment's addresses say, and the
/// file's later content moves on by a multiple of the segments' alignment
/// (their offsets stay congruent to their addresses; nothing else in an
/// ELF file records file offsets). An image of another layout is an error.
/// The table's SONAME (WeightsTable::soname), when it has one, replaces
/// the placeholder the image was linked with in its dynamic string table.
::cuvil::Status placeWeights(llvm::StringRef image, const WeightsTable &table, const std::string &path);

/// What a library whose SONAME is placed after the link is linked with: a
/// string filling the slot of a name of `length` characters.
std::string sonamePlaceholder(size_t length);

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_CPU_WEIGHTS_H
