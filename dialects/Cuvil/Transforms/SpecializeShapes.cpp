//===- SpecializeShapes.cpp - Static copies of a graph, dispatched at run time ===//
//
// --specialize seq=128,256: the sizes a hybrid model is served at most get
// a copy of the graph compiled statically (static kernels, packed weights),
// chosen when the inputs have exactly those sizes; any other size runs the
// generic graph.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/Transforms/Passes.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"

#include <map>

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILSPECIALIZESHAPESPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// Where a symbol's size can be read: input `arg`, dimension `dim`.
struct SymbolSite {
  unsigned arg;
  int64_t dim;
  int64_t lo, hi;
};

constexpr size_t kMaxVariants = 16;

struct CuvilSpecializeShapesPass final
    : mlir::cuvil::impl::CuvilSpecializeShapesPassBase<CuvilSpecializeShapesPass> {
  using Base::Base;

  /// "seq=128,256;batch=1" as symbol -> values, in the order written.
  FailureOr<SmallVector<std::pair<std::string, SmallVector<int64_t>>>> parse(Operation *where) {
    SmallVector<std::pair<std::string, SmallVector<int64_t>>> out;
    SmallVector<StringRef> groups;
    StringRef(sizes).split(groups, ';', -1, /*KeepEmpty=*/false);
    for (StringRef g : groups) {
      auto [name, list] = g.trim().split('=');
      if (name.empty() || list.empty())
        return where->emitError() << "--specialize: '" << g << "' is not SYMBOL=SIZE[,SIZE...]";
      SmallVector<StringRef> items;
      list.split(items, ',', -1, false);
      SmallVector<int64_t> values;
      for (StringRef v : items) {
        int64_t n;
        if (v.trim().getAsInteger(10, n) || n < 1)
          return where->emitError() << "--specialize: '" << v << "' (for '" << name
                                    << "') is not a size (a positive integer)";
        if (!llvm::is_contained(values, n))
          values.push_back(n);
      }
      for (auto &[other, _] : out)
        if (other == name.trim())
          return where->emitError() << "--specialize: symbol '" << name << "' is given twice";
      out.emplace_back(name.trim().str(), values);
    }
    return out;
  }

  void runOnOperation() override {
    if (StringRef(sizes).trim().empty())
      return;
    ModuleOp module = getOperation();
    func::FuncOp entry;
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      if (!f.isExternal() && (f.isPublic() || f.getSymName() == "forward"))
        entry = entry ? entry : f;
    if (!entry) {
      module.emitError() << "--specialize: the module has no entry function";
      return signalPassFailure();
    }
    FailureOr<SmallVector<std::pair<std::string, SmallVector<int64_t>>>> spec = parse(entry);
    if (failed(spec))
      return signalPassFailure();

    // Each symbol's first site, and its bounds.
    std::map<std::string, SymbolSite> sites;
    for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
      auto symbols = entry.getArgAttrOfType<ArrayAttr>(i, kDimSymbolsAttrName);
      auto bounds = entry.getArgAttrOfType<DenseI64ArrayAttr>(i, kDimBoundsAttrName);
      if (!symbols)
        continue;
      for (auto [d, a] : llvm::enumerate(symbols)) {
        auto name = llvm::dyn_cast<StringAttr>(a);
        if (!name || name.getValue().empty() || sites.count(name.str()))
          continue;
        int64_t lo = 1, hi = std::numeric_limits<int64_t>::max();
        if (bounds && int64_t(bounds.size()) == 2 * int64_t(symbols.size())) {
          lo = bounds[2 * d];
          hi = bounds[2 * d + 1];
        }
        sites[name.str()] = {i, int64_t(d), lo, hi};
      }
    }
    for (auto &[name, values] : *spec) {
      auto it = sites.find(name);
      if (it == sites.end()) {
        std::string known;
        for (auto &[k, _] : sites)
          known += (known.empty() ? "'" : ", '") + k + "'";
        entry.emitError() << "--specialize: no input has a run-time dimension named '" << name << "'"
                          << (known.empty() ? std::string(" (the model has no named run-time dimension)")
                                            : " (its symbols: " + known + ")");
        return signalPassFailure();
      }
      for (int64_t v : values)
        if (v < it->second.lo || v > it->second.hi) {
          entry.emitError() << "--specialize: " << name << "=" << v << " is outside the bounds "
                            << it->second.lo << ".." << it->second.hi << " given in --input-shape";
          return signalPassFailure();
        }
    }

    // Every combination of the listed values.
    SmallVector<SmallVector<std::pair<std::string, int64_t>>> variants = {{}};
    for (auto &[name, values] : *spec) {
      SmallVector<SmallVector<std::pair<std::string, int64_t>>> next;
      for (auto &partial : variants)
        for (int64_t v : values) {
          auto extended = partial;
          extended.emplace_back(name, v);
          next.push_back(extended);
        }
      variants = std::move(next);
    }
    if (variants.size() > kMaxVariants) {
      entry.emitError() << "--specialize: " << variants.size() << " combinations of sizes, more than "
                        << kMaxVariants << " (each is a copy of the model's code)";
      return signalPassFailure();
    }
    // Constants (the weights) first, above the dispatch: every copy reads
    // the same ones.
    Block &body = entry.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(body))
      if (llvm::isa<ConstantOp>(op))
        op.moveBefore(&body, body.begin());
    // Copies of the graph as imported, before any dispatch is added.
    SmallVector<func::FuncOp> copies;
    for (size_t k = 0; k < variants.size(); ++k)
      copies.push_back(entry.clone());
    for (auto [variant, copy] : llvm::zip(variants, copies))
      if (failed(addVariant(entry, copy, variant, sites)))
        return signalPassFailure();
  }

  /// Wraps the entry's body in `if (sizes == variant) { static copy } else
  /// { what it was }`.
  LogicalResult addVariant(func::FuncOp entry, func::FuncOp copy,
                           ArrayRef<std::pair<std::string, int64_t>> variant,
                           const std::map<std::string, SymbolSite> &sites) {
    MLIRContext *ctx = entry.getContext();
    Location loc = entry.getLoc();
    std::map<std::string, int64_t> size(variant.begin(), variant.end());

    // The static copy: those dimensions static, shapes refined.
    Block &copyBody = copy.getBody().front();
    SmallVector<Type> staticInputs;
    for (unsigned i = 0; i < copy.getNumArguments(); ++i) {
      Type t = copy.getArgument(i).getType();
      auto tensor = llvm::dyn_cast<RankedTensorType>(t);
      auto symbols = entry.getArgAttrOfType<ArrayAttr>(i, kDimSymbolsAttrName);
      if (tensor && symbols) {
        SmallVector<int64_t> shape(tensor.getShape());
        for (auto [d, a] : llvm::enumerate(symbols))
          if (auto name = llvm::dyn_cast<StringAttr>(a); name && size.count(name.str()) && d < shape.size())
            shape[d] = size[name.str()];
        t = RankedTensorType::get(shape, tensor.getElementType(), tensor.getEncoding());
      }
      copyBody.getArgument(i).setType(t);
      staticInputs.push_back(t);
    }
    copy.setFunctionType(FunctionType::get(ctx, staticInputs, copy.getResultTypes()));
    // A detached function: the pass manager needs it in a module.
    OwningOpRef<ModuleOp> holder = ModuleOp::create(loc);
    holder->push_back(copy);
    PassManager pm(ctx);
    pm.addNestedPass<func::FuncOp>(createCuvilInferShapesPass());
    if (failed(pm.run(*holder)))
      return entry.emitError() << "--specialize: refining the shapes of the copy for the given sizes failed";

    // The dispatch condition, from the first input dimension of each symbol.
    Block &body = entry.getBody().front();
    auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
    // After the weights (the constants at the top).
    Block::iterator after = body.begin();
    while (after != body.end() && llvm::isa<ConstantOp>(*after))
      ++after;
    OpBuilder b(ctx);
    b.setInsertionPoint(&body, after);
    Value all;
    for (auto &[name, value] : variant) {
      const SymbolSite &site = sites.at(name);
      Value n = b.create<tensor::DimOp>(loc, entry.getArgument(site.arg), site.dim);
      Value v = b.create<arith::ConstantIndexOp>(loc, value);
      Value eq = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, n, v);
      all = all ? b.create<arith::AndIOp>(loc, all, eq).getResult() : eq;
    }
    auto dispatch = b.create<scf::IfOp>(loc, entry.getResultTypes(), all, /*withElse=*/true);

    // Else: the graph as it was (moved, not copied).
    Block &elseBlock = dispatch.getElseRegion().front();
    if (!elseBlock.empty())
      elseBlock.getTerminator()->erase();
    auto moveFrom = std::next(Block::iterator(dispatch));
    elseBlock.getOperations().splice(elseBlock.end(), body.getOperations(), moveFrom, Block::iterator(ret));
    OpBuilder eb = OpBuilder::atBlockEnd(&elseBlock);
    eb.create<scf::YieldOp>(loc, ret.getOperands());

    // Then: the static copy, its inputs cast from the entry's.
    Block &thenBlock = dispatch.getThenRegion().front();
    if (!thenBlock.empty())
      thenBlock.getTerminator()->erase();
    OpBuilder tb = OpBuilder::atBlockEnd(&thenBlock);
    IRMapping map;
    for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
      Value a = entry.getArgument(i);
      Value refined = copy.getArgument(i);
      map.map(refined, a.getType() == refined.getType()
                           ? a
                           : tb.create<tensor::CastOp>(loc, refined.getType(), a).getResult());
    }
    auto copyRet = llvm::cast<func::ReturnOp>(copy.getBody().front().getTerminator());
    for (Operation &op : copy.getBody().front().without_terminator()) {
      if (auto c = llvm::dyn_cast<ConstantOp>(op))
        if (Value same = topLevelConstant(body, c)) {
          map.map(c.getResult(), same);
          continue;
        }
      tb.clone(op, map);
    }
    SmallVector<Value> results;
    for (auto [v, type] : llvm::zip(copyRet.getOperands(), entry.getResultTypes())) {
      Value r = map.lookupOrDefault(v);
      results.push_back(r.getType() == type ? r : tb.create<tensor::CastOp>(loc, type, r).getResult());
    }
    tb.create<scf::YieldOp>(loc, results);

    ret->setOperands(dispatch.getResults());
    copy.erase();
    return success();
  }

  /// The entry's own constant with `c`'s value, if any.
  static Value topLevelConstant(Block &body, ConstantOp c) {
    for (Operation &op : body) {
      auto other = llvm::dyn_cast<ConstantOp>(op);
      if (!other)
        break; // the constants are first
      if (other.getType() == c.getType() && other.getValue() == c.getValue())
        return other.getResult();
    }
    return {};
  }
};

} // namespace
