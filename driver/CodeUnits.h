//===- CodeUnits.h - A model's LLVM module as units compiled apart -*- C++ -*-===//
//
// The model's code is compiled one function at a time (the model function,
// each kernel, each parallel body) plus one unit of data, each its own
// LLVM module and object, so that each is cached by its own code: an edit
// to one layer recompiles the functions it touches. Every unit is made
// independent of the others' presence (no unused declarations, a fixed
// module name), so that its text, and its key, change only with its code.
// Cold builds are split the same way: the library is the same bytes
// whatever the cache held.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_CODEUNITS_H
#define CUVIL_DRIVER_CODEUNITS_H

#include "llvm/IR/Module.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::cuvil {

struct CodeUnit {
  std::string name; ///< the function's ("data" for the globals)
  std::unique_ptr<llvm::Module> module;
};

/// Splits `module` (whose local symbols become hidden globals) into units,
/// in its order: the functions with bodies, then the data.
std::vector<CodeUnit> splitIntoUnits(llvm::Module &module);

} // namespace mlir::cuvil

#endif // CUVIL_DRIVER_CODEUNITS_H
