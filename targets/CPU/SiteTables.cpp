//===- SiteTables.cpp - Named sites the runtime counts ---------------------===//
#include "targets/CPU/SiteTables.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::cuvil::cpu {

void declareRuntimeFunction(ModuleOp module, StringRef name, TypeRange args) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder b(module.getBodyRegion());
  auto f = b.create<func::FuncOp>(module.getLoc(), name, b.getFunctionType(args, {}));
  f.setPrivate();
}

void registerSiteTable(ModuleOp module, func::FuncOp f, StringRef global, StringRef registrar,
                       const std::vector<std::string> &names) {
  std::string table;
  for (const std::string &n : names) {
    table += n;
    table.push_back('\0');
  }
  OpBuilder b(module.getContext());
  // The names as a constant the runtime keeps pointers into.
  auto tableType = MemRefType::get({int64_t(table.size())}, b.getIntegerType(8));
  SmallVector<int8_t> bytes(table.begin(), table.end());
  auto data = DenseElementsAttr::get(RankedTensorType::get(tableType.getShape(), b.getIntegerType(8)),
                                     ArrayRef<int8_t>(bytes));
  b.setInsertionPointToStart(module.getBody());
  b.create<memref::GlobalOp>(module.getLoc(), global, b.getStringAttr("private"), tableType, data,
                             /*constant=*/true, /*alignment=*/nullptr);
  b.setInsertionPointToStart(&f.getBody().front());
  Value t = b.create<memref::GetGlobalOp>(f.getLoc(), tableType, global);
  Value n = b.create<arith::ConstantOp>(f.getLoc(), b.getI64IntegerAttr(int64_t(names.size())));
  b.create<func::CallOp>(f.getLoc(), registrar, TypeRange{}, ValueRange{t, n});
  declareRuntimeFunction(module, registrar, {tableType, b.getI64Type()});
}

} // namespace mlir::cuvil::cpu
