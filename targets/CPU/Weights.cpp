//===- Weights.cpp - The weights as an object of their own ----------------===//
#include "targets/CPU/Weights.h"

#include "targets/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

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

/// Each symbol's offset in the section: in order, each at its alignment.
std::vector<uint64_t> weightOffsets(const WeightsTable &table) {
  std::vector<uint64_t> offsets;
  uint64_t at = 0;
  for (const WeightsTable::Symbol &s : table.symbols) {
    at = (at + s.alignment - 1) / s.alignment * s.alignment;
    offsets.push_back(at);
    at += s.bytes.size();
  }
  return offsets;
}

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
    Attribute value = global.getValueOrNull();
    global.removeValueAttr();
    global.setLinkage(LLVM::Linkage::External);
    global.setVisibility_(LLVM::Visibility::Hidden);
    global.setDsoLocal(true);
    table.symbols.push_back({name, alignment, *bytes, value});
  }
}

std::string weightsObject(const WeightsTable &table, uint16_t machine, WeightsBytes bytes) {
  enum : uint32_t { kProgbits = 1, kSymtab = 2, kStrtab = 3, kNobits = 8 };
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
  weights.type = bytes == WeightsBytes::Included ? kProgbits : kNobits;
  weights.flags = kAlloc;
  weights.offset = out.size();
  weights.addralign = maxAlignment;
  std::vector<uint64_t> offsets = weightOffsets(table);
  if (bytes == WeightsBytes::Included) {
    for (auto [i, s] : llvm::enumerate(table.symbols)) {
      out.resize(weights.offset + offsets[i], '\0');
      append(out, s.bytes.data(), s.bytes.size());
    }
    weights.size = out.size() - weights.offset;
  } else {
    weights.size = offsets.empty() ? 0 : offsets.back() + table.symbols.back().bytes.size();
  }
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

namespace {

// ELF64 little-endian fields, read and written in place.
template <typename T> T field(llvm::StringRef image, uint64_t at) {
  T value;
  std::memcpy(&value, image.data() + at, sizeof value);
  return value;
}
template <typename T> void setField(std::string &image, uint64_t at, T value) {
  std::memcpy(image.data() + at, &value, sizeof value);
}

/// Writes every byte of `data` at the file's position.
::cuvil::Status writeAll(int fd, const char *data, size_t size, const std::string &path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, std::min<size_t>(size, size_t(1) << 30));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return ::cuvil::ioError("cannot write '" + path + "': " + std::strerror(n < 0 ? errno : ENOSPC));
    data += n;
    size -= n;
  }
  return ::cuvil::Status();
}
::cuvil::Status writeZeros(int fd, uint64_t count, const std::string &path) {
  static const char zeros[65536] = {};
  while (count > 0) {
    uint64_t n = std::min<uint64_t>(count, sizeof zeros);
    if (::cuvil::Status s = writeAll(fd, zeros, n, path); !s)
      return s;
    count -= n;
  }
  return ::cuvil::Status();
}

/// Writes `soname` over the placeholder DT_SONAME names in the dynamic
/// string table (the section the dynamic section links to).
::cuvil::Status placeSoname(std::string &image, uint64_t shoff, uint16_t shnum, const std::string &soname) {
  enum : uint32_t { kDynamic = 6 };
  enum : int64_t { kNull = 0, kSoname = 14 };
  auto section = [&](unsigned i) { return shoff + uint64_t(i) * 64; };
  for (unsigned i = 0; i < shnum; ++i) {
    if (field<uint32_t>(image, section(i) + 4) != kDynamic)
      continue;
    uint64_t off = field<uint64_t>(image, section(i) + 24), sz = field<uint64_t>(image, section(i) + 32);
    uint32_t link = field<uint32_t>(image, section(i) + 40);
    if (off + sz > image.size() || link >= shnum)
      return ::cuvil::inputError("its dynamic section lies out of the file");
    uint64_t strings = field<uint64_t>(image, section(link) + 24), stringsSize = field<uint64_t>(image, section(link) + 32);
    if (strings + stringsSize > image.size())
      return ::cuvil::inputError("its dynamic strings lie out of the file");
    for (uint64_t at = off; at + 16 <= off + sz; at += 16) {
      int64_t tag = field<int64_t>(image, at);
      if (tag == kNull)
        break;
      if (tag != kSoname)
        continue;
      uint64_t name = field<uint64_t>(image, at + 8);
      std::string placeholder = sonamePlaceholder(soname.size());
      if (name + placeholder.size() + 1 > stringsSize ||
          image.compare(strings + name, placeholder.size() + 1, placeholder.c_str(), placeholder.size() + 1) != 0)
        return ::cuvil::inputError("its SONAME is not the placeholder of this name's slot");
      std::memset(image.data() + strings + name, 0, placeholder.size());
      std::memcpy(image.data() + strings + name, soname.data(), soname.size());
      return ::cuvil::Status();
    }
  }
  return ::cuvil::inputError("it has no SONAME to place");
}

} // namespace

std::string sonamePlaceholder(size_t length) {
  // An argument lld takes as it is (not '@', its response files), and
  // not a name anyone links.
  return std::string(nameSlotBytes(length) - 1, '_');
}

::cuvil::Status placeWeights(llvm::StringRef linked, const WeightsTable &table, const std::string &path) {
  enum : uint32_t { kProgbits = 1, kNobits = 8, kLoad = 1 };
  auto layoutError = [&](const std::string &why) {
    return ::cuvil::inputError("placing the weights in the linked library: " + why + " (a linker of another layout?)");
  };
  std::string image = linked.str();
  if (image.size() < 64 || llvm::StringRef(image).take_front(4) != "\x7f" "ELF" || image[4] != 2 || image[5] != 1)
    return layoutError("not an ELF64 little-endian file");
  uint64_t phoff = field<uint64_t>(image, 32), shoff = field<uint64_t>(image, 40);
  uint16_t phentsize = field<uint16_t>(image, 54), phnum = field<uint16_t>(image, 56);
  uint16_t shentsize = field<uint16_t>(image, 58), shnum = field<uint16_t>(image, 60);
  uint16_t shstrndx = field<uint16_t>(image, 62);
  if (phentsize != 56 || shentsize != 64 || phoff + uint64_t(phnum) * 56 > image.size() ||
      shoff + uint64_t(shnum) * 64 > image.size() || shstrndx >= shnum)
    return layoutError("headers out of the file");
  auto section = [&](unsigned i) { return shoff + uint64_t(i) * 64; };
  auto segment = [&](unsigned i) { return phoff + uint64_t(i) * 56; };
  uint64_t names = field<uint64_t>(image, section(shstrndx) + 24);
  uint64_t namesSize = field<uint64_t>(image, section(shstrndx) + 32);
  if (names + namesSize > image.size())
    return layoutError("section names out of the file");

  // The reserved section, and the loaded segment whose addresses hold it;
  // the identity, rewritten in place when another build's.
  std::optional<unsigned> weights;
  for (unsigned i = 0; i < shnum; ++i) {
    uint32_t name = field<uint32_t>(image, section(i));
    if (name >= namesSize)
      continue;
    llvm::StringRef sectionName(image.data() + names + name);
    if (sectionName == ".cuvil.weights")
      weights = i;
    if (sectionName == ".cuvil.identity") {
      uint64_t off = field<uint64_t>(image, section(i) + 24), sz = field<uint64_t>(image, section(i) + 32);
      if (off + sz > image.size() || sz != table.identity.size())
        return layoutError("its identity is not as long as this build's");
      std::memcpy(image.data() + off, table.identity.data(), sz);
    }
  }
  if (!table.soname.empty()) {
    if (::cuvil::Status s = placeSoname(image, shoff, shnum, table.soname); !s)
      return layoutError(s.error().message);
  }
  std::vector<uint64_t> offsets = weightOffsets(table);
  uint64_t size = offsets.empty() ? 0 : offsets.back() + table.symbols.back().bytes.size();
  // Nothing to place: no weights, or none the code reads (lld collects the
  // section then, as it did when the section held the bytes).
  if (size == 0 || !weights) { // the image as linked
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
      return ::cuvil::ioError("cannot write '" + path + "': " + std::strerror(errno));
    ::cuvil::Status s = writeAll(fd, image.data(), image.size(), path);
    if (::close(fd) != 0 && s)
      return ::cuvil::ioError("cannot write '" + path + "': " + std::strerror(errno));
    return s;
  }
  uint64_t sec = section(*weights);
  if (field<uint32_t>(image, sec + 4) != kNobits || field<uint64_t>(image, sec + 32) != size)
    return layoutError(".cuvil.weights is not the reserved section of this table");
  uint64_t address = field<uint64_t>(image, sec + 16);
  std::optional<unsigned> holder;
  uint64_t alignment = 1;
  for (unsigned i = 0; i < phnum; ++i) {
    if (field<uint32_t>(image, segment(i)) != kLoad)
      continue;
    uint64_t vaddr = field<uint64_t>(image, segment(i) + 16), memsz = field<uint64_t>(image, segment(i) + 40);
    alignment = std::max<uint64_t>(alignment, field<uint64_t>(image, segment(i) + 48));
    if (size > 0 && vaddr <= address && address + size <= vaddr + memsz)
      holder = i;
  }
  if (!holder)
    return layoutError("no loaded segment holds .cuvil.weights");
  uint64_t seg = segment(*holder);
  uint64_t segOffset = field<uint64_t>(image, seg + 8), segAddress = field<uint64_t>(image, seg + 16);
  uint64_t fileEnd = segOffset + field<uint64_t>(image, seg + 32); // its bytes in the file end here
  uint64_t at = segOffset + (address - segAddress);                 // and the weights' go here
  if (at < fileEnd)
    return layoutError("the reserved section is not past its segment's file bytes");

  // The content from fileEnd on moves by `shift` so that the weights fit
  // before it; nothing before fileEnd may reach past it.
  uint64_t next = image.size();
  for (unsigned i = 0; i < shnum; ++i) {
    uint64_t off = field<uint64_t>(image, section(i) + 24), sz = field<uint64_t>(image, section(i) + 32);
    if (field<uint32_t>(image, section(i) + 4) == kNobits || sz == 0)
      continue;
    if (off < fileEnd && off + sz > fileEnd)
      return layoutError("a section straddles the end of the weights' segment");
    if (off >= fileEnd)
      next = std::min(next, off);
  }
  for (unsigned i = 0; i < phnum; ++i) {
    uint64_t off = field<uint64_t>(image, segment(i) + 8), sz = field<uint64_t>(image, segment(i) + 32);
    if (i != *holder && sz > 0 && off < fileEnd && off + sz > fileEnd)
      return layoutError("a segment straddles the end of the weights' segment");
    if (sz > 0 && off >= fileEnd)
      next = std::min(next, off);
  }
  if (shoff >= fileEnd)
    next = std::min(next, shoff);
  uint64_t shift = at + size > next ? (at + size - next + alignment - 1) / alignment * alignment : 0;

  for (unsigned i = 0; i < shnum; ++i)
    if (i != *weights && field<uint64_t>(image, section(i) + 24) >= fileEnd)
      setField<uint64_t>(image, section(i) + 24, field<uint64_t>(image, section(i) + 24) + shift);
  for (unsigned i = 0; i < phnum; ++i)
    if (i != *holder && field<uint64_t>(image, segment(i) + 8) >= fileEnd)
      setField<uint64_t>(image, segment(i) + 8, field<uint64_t>(image, segment(i) + 8) + shift);
  if (field<uint64_t>(image, seg + 40) < at + size - segOffset)
    return layoutError("the weights' segment is smaller than the section");
  setField<uint64_t>(image, seg + 32, at + size - segOffset);
  setField<uint32_t>(image, sec + 4, kProgbits);
  setField<uint64_t>(image, sec + 24, at);
  // Section headers are read before the file's end moves (shoff itself is
  // rewritten last).
  if (shoff >= fileEnd)
    setField<uint64_t>(image, 40, shoff + shift);

  // The file: the image to its segment's end, the weights at their place,
  // the rest of the image after the gap.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return ::cuvil::ioError("cannot write '" + path + "': " + std::strerror(errno));
  auto closeFile = llvm::make_scope_exit([&] { ::close(fd); });
  if (::cuvil::Status s = writeAll(fd, image.data(), fileEnd, path); !s)
    return s;
  if (::cuvil::Status s = writeZeros(fd, at - fileEnd, path); !s)
    return s;
  for (auto [i, w] : llvm::enumerate(table.symbols)) {
    uint64_t pad = offsets[i] - (i == 0 ? 0 : offsets[i - 1] + table.symbols[i - 1].bytes.size());
    if (::cuvil::Status s = writeZeros(fd, pad, path); !s)
      return s;
    if (::cuvil::Status s = writeAll(fd, w.bytes.data(), w.bytes.size(), path); !s)
      return s;
  }
  if (::cuvil::Status s = writeZeros(fd, next + shift - (at + size), path); !s)
    return s;
  if (::cuvil::Status s = writeAll(fd, image.data() + next, image.size() - next, path); !s)
    return s;
  if (::close(fd) != 0) {
    closeFile.release();
    return ::cuvil::ioError("cannot write '" + path + "': " + std::strerror(errno));
  }
  closeFile.release();
  return ::cuvil::Status();
}

} // namespace mlir::cuvil
