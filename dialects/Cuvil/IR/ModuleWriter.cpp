//===- ModuleWriter.cpp - Write modules with large weights ----------------===//
#include "dialects/Cuvil/IR/ModuleWriter.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::cuvil {
namespace {

bool isBareKey(StringRef key) {
  if (key.empty() || !(llvm::isAlpha(key[0]) || key[0] == '_'))
    return false;
  for (char c : key)
    if (!(llvm::isAlnum(c) || c == '_' || c == '$' || c == '.'))
      return false;
  return true;
}

void printKey(llvm::raw_ostream &os, StringRef key) {
  if (isBareKey(key)) {
    os << key;
    return;
  }
  os << '"';
  llvm::printEscapedString(key, os);
  os << '"';
}

/// "0x" + the alignment as 4 little-endian bytes + the data, in hex.
void printBlobHex(llvm::raw_ostream &os, const AsmResourceBlob &blob) {
  static const char digits[] = "0123456789ABCDEF";
  uint32_t align = static_cast<uint32_t>(blob.getDataAlignment());
  os << "\"0x";
  for (int k = 0; k < 4; ++k) {
    uint8_t b = (align >> (8 * k)) & 0xff;
    os << digits[b >> 4] << digits[b & 15];
  }
  ArrayRef<char> data = blob.getData();
  char chunk[8192];
  size_t fill = 0;
  for (char c : data) {
    uint8_t b = static_cast<uint8_t>(c);
    chunk[fill++] = digits[b >> 4];
    chunk[fill++] = digits[b & 15];
    if (fill == sizeof(chunk)) {
      os.write(chunk, fill);
      fill = 0;
    }
  }
  os.write(chunk, fill);
  os << '"';
}

} // namespace

LogicalResult writeModule(ModuleOp module, llvm::raw_ostream &os, bool bytecode) {
  if (bytecode) {
    BytecodeWriterConfig config;
    return writeBytecodeToFile(module.getOperation(), os, config);
  }
  // The weights are taken out of their entries while the ops are printed
  // (MLIR would hex-encode each into a string, even to elide it), then put
  // back and streamed in the metadata section.
  llvm::MapVector<StringRef, DenseResourceElementsHandle> handles;
  module.walk([&](Operation *op) {
    for (NamedAttribute attr : op->getAttrs())
      if (auto res = llvm::dyn_cast<DenseResourceElementsAttr>(attr.getValue()))
        handles.insert({res.getRawHandle().getKey(), res.getRawHandle()});
  });
  std::vector<std::pair<DialectResourceBlobManager::BlobEntry *, AsmResourceBlob>> saved;
  for (auto &[key, handle] : handles) {
    DialectResourceBlobManager::BlobEntry *entry = handle.getResource();
    if (!entry || !entry->getBlob())
      continue;
    AsmResourceBlob blob = std::move(*entry->getBlob());
    entry->setBlob(AsmResourceBlob());
    saved.emplace_back(entry, std::move(blob));
  }
  std::string text;
  {
    llvm::raw_string_ostream ts(text);
    OpPrintingFlags flags;
    flags.enableDebugInfo(true, /*prettyForm=*/false);
    module.print(ts, flags);
  }
  for (auto &[entry, blob] : saved)
    entry->setBlob(std::move(blob));
  // Drop the printer's (now empty) resource section; ours follows.
  size_t meta = text.rfind("{-#");
  if (meta != std::string::npos && text.find("external_resources", meta) == std::string::npos)
    text.resize(meta);
  os << text;

  bool any = false;
  for (auto &[key, handle] : handles)
    any |= handle.getBlob() != nullptr;
  if (!any)
    return success();
  os << "\n{-#\n  dialect_resources: {\n    builtin: {\n";
  bool first = true;
  for (auto &[key, handle] : handles) {
    AsmResourceBlob *blob = handle.getBlob();
    if (!blob)
      continue;
    if (!first)
      os << ",\n";
    first = false;
    os << "      ";
    printKey(os, key);
    os << ": ";
    printBlobHex(os, *blob);
  }
  os << "\n    }\n  }\n#-}\n";
  return success();
}

} // namespace mlir::cuvil
