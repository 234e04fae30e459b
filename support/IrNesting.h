//===- IrNesting.h - Refuse IR text nested too deeply to parse --*- C++ -*-===//
//
// MLIR's parser recurses once per nested region, type and attribute: 5,000
// nested modules or a 100,000-deep tuple type overflow the stack (SIGSEGV)
// before any verifier runs. checkIrNesting scans the text first, as the
// importer bounds pickle depth (RELIABILITY.md B2, B5), and refuses input
// nested deeper than any real model (the deepest compiled IR nests a few
// dozen levels) with the line and column where the limit was passed.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_IRNESTING_H
#define CUVIL_SUPPORT_IRNESTING_H

#include "support/Status.h"

#include <string>
#include <string_view>

namespace cuvil {

/// The deepest nesting of {}, (), [] and <> accepted in IR text.
constexpr int kMaxIrNesting = 256;

/// Checks MLIR text (bytecode, which starts "ML\xefR", is not scanned).
/// The error (CUVIL-E-MLIR-NESTING) names `name`, the line and the column.
Status checkIrNesting(std::string_view text, const std::string &name, int maxDepth = kMaxIrNesting);

} // namespace cuvil

#endif // CUVIL_SUPPORT_IRNESTING_H
