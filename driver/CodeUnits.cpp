//===- CodeUnits.cpp - A model's LLVM module as units compiled apart ------===//
#include "driver/CodeUnits.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

namespace mlir::cuvil {

namespace {

/// Drops the declarations `unit` does not use, so that its text does not
/// depend on what the other units hold.
void dropUnusedDeclarations(llvm::Module &unit) {
  for (llvm::Function &f : llvm::make_early_inc_range(unit.functions()))
    if (f.isDeclaration() && f.use_empty())
      f.eraseFromParent();
  for (llvm::GlobalVariable &g : llvm::make_early_inc_range(unit.globals()))
    if (g.isDeclaration() && g.use_empty())
      g.eraseFromParent();
}

} // namespace

std::vector<CodeUnit> splitIntoUnits(llvm::Module &module) {
  // Symbols another unit refers to must be visible to the linker, and no
  // further than the library; and defined for good (a linkonce_odr helper,
  // such as MLIR's __mlir_math_ipowi_*, unused in its own unit would be
  // dropped there).
  unsigned anonymous = 0;
  for (llvm::GlobalValue &gv : module.global_values()) {
    if (gv.isDeclaration() || gv.hasExternalLinkage())
      continue;
    if (!gv.hasName())
      gv.setName("cuvil_anonymous_" + std::to_string(anonymous++));
    gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
    gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
    gv.setDSOLocal(true);
  }
  std::vector<CodeUnit> units;
  auto clone = [&](const std::string &name, auto keep) {
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> unit = llvm::CloneModule(module, map, keep);
    dropUnusedDeclarations(*unit);
    unit->setModuleIdentifier("cuvil");
    unit->setSourceFileName("cuvil");
    units.push_back({name, std::move(unit)});
  };
  for (llvm::Function &f : module.functions())
    if (!f.isDeclaration())
      clone(f.getName().str(), [&f](const llvm::GlobalValue *gv) { return gv == &f; });
  bool data = llvm::any_of(module.globals(), [](const llvm::GlobalVariable &g) { return !g.isDeclaration(); });
  if (data)
    clone("data", [](const llvm::GlobalValue *gv) { return llvm::isa<llvm::GlobalVariable>(gv); });
  return units;
}

} // namespace mlir::cuvil
