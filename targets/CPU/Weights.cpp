//===- Weights.cpp - The weights as an object of their own ----------------===//
#include "targets/CPU/Weights.h"

#include "targets/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>
#include <cstring>

namespace mlir::cuvil {

#define GEN_PASS_DEF_EXTRACTWEIGHTSPASS
#include "targets/CPU/Passes.h.inc"

namespace {

/// The bytes of a global's value when it is a weight.
std::optional<ArrayRef<char>> weightBytes(LLVM::GlobalOp global) {
  if (!global.getConstant() || global.getLinkage() != LLVM::Linkage::Private)
    return std::nullopt;
  Attribute value = global.getValueOrNull();
  auto shaped = llvm::dyn_cast_or_null<ShapedType>(
      llvm::isa_and_nonnull<ElementsAttr>(value) ? llvm::cast<ElementsAttr>(value).getShapedType()
                                                 : Type());
  if (!shaped || !shaped.hasStaticShape())
    return std::nullopt;
  Type element = shaped.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  uint64_t size = shaped.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
  ArrayRef<char> bytes;
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    bytes = blob->getData();
  } else if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return std::nullopt; // a zero-initialised array costs nothing in the code
    bytes = dense.getRawData();
  } else {
    return std::nullopt;
  }
  // The model's tensors are resources whatever their size; other arrays
  // only when large (small tables are better folded into the code).
  bool resource = llvm::isa<DenseResourceElementsAttr>(value);
  if (bytes.size() != size || size == 0 || (!resource && size < kMinWeightBytes))
    return std::nullopt;
  return bytes;
}

void append(std::string &out, const void *data, size_t n) {
  out.append(static_cast<const char *>(data), n);
}
template <typename T>
void put(std::string &out, T value) { // little-endian hosts and targets only
  append(out, &value, sizeof value);
}
void padTo(std::string &out, uint64_t alignment) {
  out.resize((out.size() + alignment - 1) / alignment * alignment, '\0');
}

struct SectionHeader {
  uint32_t name = 0, type = 0;
  uint64_t flags = 0, addr = 0, offset = 0, size = 0;
  uint32_t link = 0, info = 0;
  uint64_t addralign = 1, entsize = 0;
};

struct ExtractWeightsPass final : impl::ExtractWeightsPassBase<ExtractWeightsPass> {
  void runOnOperation() override {
    WeightsTable table;
    extractWeights(getOperation(), table);
    Builder b(&getContext());
    SmallVector<Attribute> entries;
    for (const WeightsTable::Symbol &s : table.symbols)
      entries.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("name", b.getStringAttr(s.name)),
           b.getNamedAttr("bytes", b.getI64IntegerAttr(s.bytes.size())),
           b.getNamedAttr("alignment", b.getI64IntegerAttr(s.alignment))}));
    getOperation()->setAttr("cuvil.weights", b.getArrayAttr(entries));
  }
};

} // namespace

void extractWeights(ModuleOp module, WeightsTable &table) {
  SymbolTable symbols(module);
  unsigned index = table.symbols.size();
  for (auto global : llvm::make_early_inc_range(module.getOps<LLVM::GlobalOp>())) {
    std::optional<ArrayRef<char>> bytes = weightBytes(global);
    if (!bytes)
      continue;
    std::string name = "cuvil_weight_" + std::to_string(index++);
    if (failed(symbols.rename(global, StringAttr::get(module.getContext(), name))))
      continue;
    uint64_t alignment = std::max<uint64_t>(global.getAlignment().value_or(1), 1);
    global.removeValueAttr();
    global.setLinkage(LLVM::Linkage::External);
    global.setVisibility_(LLVM::Visibility::Hidden);
    global.setDsoLocal(true);
    table.symbols.push_back({name, alignment, *bytes});
  }
}

std::string weightsObject(const WeightsTable &table, uint16_t machine) {
  enum : uint32_t { kProgbits = 1, kSymtab = 2, kStrtab = 3 };
  const uint64_t kAlloc = 2;
  // Section names.
  std::string shstrtab(1, '\0');
  auto sectionName = [&](const char *n) {
    uint32_t at = shstrtab.size();
    shstrtab += n;
    shstrtab += '\0';
    return at;
  };
  SectionHeader weights, stack, identity, symtab, strtab, names;
  weights.name = sectionName(".cuvil.weights");
  identity.name = sectionName(".cuvil.identity");
  stack.name = sectionName(".note.GNU-stack"); // no executable stack
  symtab.name = sectionName(".symtab");
  strtab.name = sectionName(".strtab");
  names.name = sectionName(".shstrtab");

  uint64_t maxAlignment = 1;
  for (const WeightsTable::Symbol &s : table.symbols)
    maxAlignment = std::max(maxAlignment, s.alignment);

  std::string out;
  out.reserve(64 + maxAlignment + table.totalBytes() + 64 * table.symbols.size() + 4096);
  out.resize(64, '\0'); // the ELF header, filled in last
  padTo(out, maxAlignment);
  weights.type = kProgbits;
  weights.flags = kAlloc;
  weights.offset = out.size();
  weights.addralign = maxAlignment;
  std::vector<uint64_t> offsets;
  for (const WeightsTable::Symbol &s : table.symbols) {
    padTo(out, s.alignment);
    offsets.push_back(out.size() - weights.offset);
    append(out, s.bytes.data(), s.bytes.size());
  }
  weights.size = out.size() - weights.offset;
  stack.type = kProgbits;
  stack.offset = out.size();
  identity.type = kProgbits; // not loaded: read from the file by the cache
  identity.offset = out.size();
  identity.size = table.identity.size();
  out += table.identity;

  // Symbols: the null one, then one global hidden object per weight.
  std::string strings(1, '\0');
  padTo(out, 8);
  symtab.type = kSymtab;
  symtab.offset = out.size();
  symtab.addralign = 8;
  symtab.entsize = 24;
  symtab.link = 5; // .strtab
  symtab.info = 1; // the first global symbol
  out.append(24, '\0');
  for (auto [i, s] : llvm::enumerate(table.symbols)) {
    put<uint32_t>(out, strings.size());
    strings += s.name;
    strings += '\0';
    put<uint8_t>(out, (1 << 4) | 1); // STB_GLOBAL, STT_OBJECT
    put<uint8_t>(out, 2);            // STV_HIDDEN
    put<uint16_t>(out, 1);           // .cuvil.weights
    put<uint64_t>(out, offsets[i]);
    put<uint64_t>(out, s.bytes.size());
  }
  symtab.size = out.size() - symtab.offset;
  strtab.type = kStrtab;
  strtab.offset = out.size();
  strtab.size = strings.size();
  out += strings;
  names.type = kStrtab;
  names.offset = out.size();
  names.size = shstrtab.size();
  out += shstrtab;

  padTo(out, 8);
  uint64_t sectionHeaders = out.size();
  for (const SectionHeader &h : {SectionHeader(), weights, stack, identity, symtab, strtab, names}) {
    put<uint32_t>(out, h.name);
    put<uint32_t>(out, h.type);
    put<uint64_t>(out, h.flags);
    put<uint64_t>(out, h.addr);
    put<uint64_t>(out, h.offset);
    put<uint64_t>(out, h.size);
    put<uint32_t>(out, h.link);
    put<uint32_t>(out, h.info);
    put<uint64_t>(out, h.addralign);
    put<uint64_t>(out, h.entsize);
  }

  std::string header;
  append(header, "\x7f" "ELF", 4);
  put<uint8_t>(header, 2); // ELFCLASS64
  put<uint8_t>(header, 1); // ELFDATA2LSB
  put<uint8_t>(header, 1); // EV_CURRENT
  header.resize(16, '\0');
  put<uint16_t>(header, 1); // ET_REL
  put<uint16_t>(header, machine);
  put<uint32_t>(header, 1);
  put<uint64_t>(header, 0); // entry
  put<uint64_t>(header, 0); // program headers
  put<uint64_t>(header, sectionHeaders);
  put<uint32_t>(header, 0); // flags
  put<uint16_t>(header, 64);
  put<uint16_t>(header, 0);
  put<uint16_t>(header, 0);
  put<uint16_t>(header, 64);
  put<uint16_t>(header, 7); // sections
  put<uint16_t>(header, 6); // .shstrtab
  std::memcpy(out.data(), header.data(), header.size());
  return out;
}

} // namespace mlir::cuvil
