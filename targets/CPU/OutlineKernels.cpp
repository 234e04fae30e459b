//===- OutlineKernels.cpp - Every loop nest a function named by its code --===//
//
// Each top-level loop nest of a model function becomes a private function
// `cuvil_kernel_<digest>` taking the buffers and values it uses (constants
// are cloned in), and the bodies ParallelizeLoops made are renamed
// `cuvil_parallel_<digest>`, where the digest is that of the function's own
// code. Identical kernels (the layers of a transformer) are then one
// function, and a kernel keeps its name whatever the model around it: the
// driver compiles each function as a unit of its own, cached by its code, so
// an edit to one layer recompiles that layer's kernels and the model
// function, and nothing else.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::cuvil {

#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "targets/CPU/Passes.h.inc"

namespace {

/// The name a function has while its code is digested (and a kernel until
/// it is named by that digest), so that its own name is not part of it.
constexpr StringLiteral kDigestedName = "__cuvil_function_being_digested";

/// Can cross a function boundary under the bare-pointer convention.
bool passable(Type t) {
  if (auto m = llvm::dyn_cast<MemRefType>(t)) {
    int64_t offset;
    SmallVector<int64_t> strides;
    return m.hasStaticShape() && m.getMemorySpace() == nullptr &&
           succeeded(getStridesAndOffset(m, strides, offset)) && !ShapedType::isDynamic(offset) &&
           llvm::none_of(strides, [](int64_t s) { return ShapedType::isDynamic(s); });
  }
  return t.isIntOrIndexOrFloat() || llvm::isa<LLVM::LLVMPointerType>(t);
}

/// A buffer of run-time sizes (hybrid): the bare-pointer convention carries
/// no sizes, so it crosses as a static memref<1xT> at the same address and
/// its run-time sizes, and the kernel rebuilds it. Identity layouts only
/// (arena views and model arguments have them).
bool passableAsBaseAndSizes(Type t) {
  auto m = llvm::dyn_cast<MemRefType>(t);
  return m && !m.hasStaticShape() && m.getRank() > 0 && m.getLayout().isIdentity() &&
         m.getMemorySpace() == nullptr && m.getElementType().isIntOrIndexOrFloat();
}

/// The kernel's view of a buffer passed as its base and run-time sizes:
/// row-major strides from the sizes, cast back to the identity layout.
Value rebuildFromBaseAndSizes(OpBuilder &b, Location loc, MemRefType type, Value base, ValueRange sizes) {
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> mixedSizes(rank), strides(rank);
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    mixedSizes[d] = type.isDynamicDim(d) ? OpFoldResult(sizes[next++]) : OpFoldResult(b.getIndexAttr(type.getDimSize(d)));
  OpFoldResult stride = b.getIndexAttr(1);
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    auto sa = llvm::dyn_cast<Attribute>(stride), za = llvm::dyn_cast<Attribute>(mixedSizes[d]);
    if (sa && za) {
      stride = b.getIndexAttr(llvm::cast<IntegerAttr>(sa).getInt() * llvm::cast<IntegerAttr>(za).getInt());
      continue;
    }
    stride = b.create<arith::MulIOp>(loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                                     getValueOrCreateConstantIndexOp(b, loc, mixedSizes[d]))
                 .getResult();
  }
  SmallVector<int64_t> staticStrides;
  for (OpFoldResult st : strides)
    staticStrides.push_back(llvm::isa<Attribute>(st) ? llvm::cast<IntegerAttr>(llvm::cast<Attribute>(st)).getInt()
                                                    : ShapedType::kDynamic);
  auto viewType = MemRefType::get(type.getShape(), type.getElementType(),
                                  StridedLayoutAttr::get(b.getContext(), 0, staticStrides));
  auto view = b.create<memref::ReinterpretCastOp>(loc, viewType, base, b.getIndexAttr(0), mixedSizes, strides);
  if (view.getType() == type)
    return view;
  return b.create<memref::CastOp>(loc, type, view);
}

bool cloneable(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>();
}

/// The digest of `f`'s code, its name aside.
std::string codeDigest(func::FuncOp f) {
  std::string name = f.getSymName().str();
  f.setSymName(kDigestedName);
  std::string text;
  llvm::raw_string_ostream os(text);
  f->print(os, OpPrintingFlags().useLocalScope());
  f.setSymName(name);
  return llvm::toHex(llvm::BLAKE3::hash<8>(llvm::arrayRefFromStringRef(text)), /*LowerCase=*/true);
}

struct OutlineKernelsPass final : impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // The parallel bodies first: the kernels refer to them by name.
    for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (f.getSymName().starts_with("__cuvil_parallel_"))
        nameByCode(symbols, f, "cuvil_parallel_");
    SmallVector<func::FuncOp> entries;
    for (auto f : module.getOps<func::FuncOp>())
      if (f.isPublic() && !f.isExternal())
        entries.push_back(f);
    for (func::FuncOp f : entries)
      for (Operation &op : llvm::make_early_inc_range(f.getBody().front()))
        if (op.getNumRegions() > 0 && op.getNumResults() == 0)
          outline(symbols, &op);
  }

  /// Renames `f` by its code, or replaces it with the function of the same
  /// code already there.
  void nameByCode(SymbolTable &symbols, func::FuncOp f, StringRef prefix) {
    std::string name = (prefix + codeDigest(f)).str();
    StringAttr to = StringAttr::get(&getContext(), name);
    if (Operation *same = symbols.lookup(name)) {
      if (same == f)
        return;
      if (failed(SymbolTable::replaceAllSymbolUses(f.getSymNameAttr(), to, getOperation()))) {
        signalPassFailure();
        return;
      }
      symbols.erase(f);
      return;
    }
    if (failed(symbols.rename(f, to)))
      signalPassFailure();
  }

  void outline(SymbolTable &symbols, Operation *op) {
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(op->getRegions(), used);
    used.insert(op->operand_begin(), op->operand_end());
    SmallVector<Value> args, cloned, split;
    for (Value v : used) {
      if (cloneable(v))
        cloned.push_back(v);
      else if (passable(v.getType()))
        args.push_back(v);
      else if (passableAsBaseAndSizes(v.getType()))
        split.push_back(v);
      else
        return; // stays inline
    }
    MLIRContext *ctx = &getContext();
    Location loc = op->getLoc();
    // Buffers of run-time sizes cross as their base and sizes.
    OpBuilder cb(op);
    SmallVector<Value> callArgs(args);
    for (Value v : split) {
      auto m = llvm::cast<MemRefType>(v.getType());
      callArgs.push_back(cb.create<memref::ReinterpretCastOp>(
          loc, MemRefType::get({1}, m.getElementType()), v, int64_t(0), ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1}));
      for (int64_t d = 0; d < m.getRank(); ++d)
        if (m.isDynamicDim(d))
          callArgs.push_back(cb.create<memref::DimOp>(loc, v, d));
    }
    SmallVector<Type> types;
    for (Value v : callArgs)
      types.push_back(v.getType());
    OpBuilder mb(ctx);
    mb.setInsertionPointToEnd(getOperation().getBody());
    auto kernel = mb.create<func::FuncOp>(loc, kDigestedName, FunctionType::get(ctx, types, {}));
    kernel.setPrivate();
    Block *body = kernel.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(body);
    IRMapping map;
    for (Value v : cloned)
      map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    for (auto [i, v] : llvm::enumerate(args))
      map.map(v, body->getArgument(i));
    unsigned next = args.size();
    for (Value v : split) {
      auto m = llvm::cast<MemRefType>(v.getType());
      Value base = body->getArgument(next++);
      ValueRange sizes = body->getArguments().slice(next, m.getNumDynamicDims());
      next += m.getNumDynamicDims();
      map.map(v, rebuildFromBaseAndSizes(b, loc, m, base, sizes));
    }
    b.clone(*op, map);
    b.create<func::ReturnOp>(loc);

    std::string name = "cuvil_kernel_" + codeDigest(kernel);
    if (symbols.lookup(name)) {
      kernel.erase(); // the same code, outlined from another layer
    } else {
      kernel.setSymName(name);
      symbols.insert(kernel);
    }
    cb.create<func::CallOp>(loc, name, TypeRange{}, callArgs);
    op->erase();
  }
};

} // namespace

} // namespace mlir::cuvil
