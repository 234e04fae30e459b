//===- Archive.cpp - The layout of a TorchScript archive ------------------===//
#include "frontend/torchscript/Archive.h"

#include "frontend/torchscript/Parser.h"
#include "support/HugePages.h"
#include "support/Tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace cuvil::torchscript {

Result<std::unique_ptr<TorchScriptArchive>>
TorchScriptArchive::open(const std::string &path) {
  Result<ZipArchive> zip = ZipArchive::open(path);
  if (!zip)
    return zip.error();
  std::unique_ptr<TorchScriptArchive> a(new TorchScriptArchive(std::move(*zip)));
  if (Status s = a->validateLayout(); !s)
    return s.error();
  return a;
}

Status TorchScriptArchive::validateLayout() {
  if (zip_.entries().empty())
    return error("CUVIL-E-ARCHIVE-LAYOUT", "the archive is empty");
  // Every entry lives under one top-level folder (A9).
  const std::string &first = zip_.entries().front().name;
  size_t slash = first.find('/');
  if (slash == std::string::npos)
    return error("CUVIL-E-ARCHIVE-LAYOUT",
                 "entry '" + first + "' is not in a subdirectory (a TorchScript "
                 "archive keeps everything under one top-level folder)");
  prefix_ = first.substr(0, slash + 1);
  for (const ZipEntry &e : zip_.entries())
    if (e.name.compare(0, prefix_.size(), prefix_) != 0)
      return error("CUVIL-E-ARCHIVE-LAYOUT",
                   "entry '" + e.name + "' is outside the archive's folder '" +
                       prefix_ + "' (mixed prefixes)");

  auto readEntry = [&](const std::string &name, size_t maxSize,
                       bool required) -> Result<std::optional<std::string>> {
    const ZipEntry *e = zip_.find(prefix_ + name);
    if (!e) {
      if (required)
        return error("CUVIL-E-ARCHIVE-LAYOUT",
                     "'" + name + "' is missing (not a TorchScript archive? "
                     "export with torch.jit.save)");
      return std::optional<std::string>();
    }
    if (e->uncompressedSize > maxSize)
      return error("CUVIL-E-ARCHIVE-LAYOUT",
                   "'" + name + "' is implausibly large (" +
                       std::to_string(e->uncompressedSize) + " bytes)");
    Result<std::string> bytes = zip_.read(*e);
    if (!bytes)
      return bytes.error();
    return std::optional<std::string>(std::move(*bytes));
  };

  // version: a decimal number in the supported range (A12).
  // Newer writers keep the version at .data/version.
  Result<std::optional<std::string>> version = readEntry("version", 64, false);
  if (!version)
    return version.error();
  if (!*version) {
    version = readEntry(".data/version", 64, true);
    if (!version)
      return version.error();
  }
  std::string v = **version;
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' '))
    v.pop_back();
  char *end = nullptr;
  errno = 0;
  long long n = v.empty() ? -1 : std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno)
    return error("CUVIL-E-ARCHIVE-VERSION", "'version' does not hold a number");
  if (n < kMinFormatVersion || n > kMaxFormatVersion)
    return error("CUVIL-E-ARCHIVE-VERSION",
                 "file format version " + std::to_string(n) + " is unsupported (supported " +
                     std::to_string(kMinFormatVersion) + ".." +
                     std::to_string(kMaxFormatVersion) + ")");
  version_ = n;

  Result<std::optional<std::string>> order = readEntry("byteorder", 64, false);
  if (!order)
    return order.error();
  if (*order && **order != "little")
    return error("CUVIL-E-ARCHIVE-LAYOUT",
                 "tensor data is stored '" + **order + "'-endian; only little-endian is supported");

  Result<std::optional<std::string>> data = readEntry("data.pkl", uint64_t(1) << 30, true);
  if (!data)
    return data.error();
  Result<Pickle> dataPickle = Pickle::parse(**data, path() + ": data.pkl");
  if (!dataPickle)
    return dataPickle.error();
  data_ = std::move(*dataPickle);
  if (!data_.root()->is(PValue::Kind::Object))
    return error("CUVIL-E-ARCHIVE-LAYOUT",
                 std::string("data.pkl holds a ") + data_.root()->kindName() +
                     ", not a TorchScript module");

  Result<std::optional<std::string>> consts = readEntry("constants.pkl", uint64_t(1) << 30, false);
  if (!consts)
    return consts.error();
  if (*consts) {
    Result<Pickle> constPickle = Pickle::parse(**consts, path() + ": constants.pkl");
    if (!constPickle)
      return constPickle.error();
    constants_ = std::move(*constPickle);
    if (!constants_.root()->is(PValue::Kind::Tuple))
      return error("CUVIL-E-ARCHIVE-LAYOUT", "constants.pkl does not hold a tuple");
  }
  bool hasCode = false;
  for (const ZipEntry &e : zip_.entries())
    hasCode |= e.name.compare(0, prefix_.size() + 5, prefix_ + "code/") == 0;
  if (!hasCode)
    return error("CUVIL-E-ARCHIVE-LAYOUT", "the archive has no code/ folder");
  return Status::ok();
}

const PValue *TorchScriptArchive::constant(size_t i) const {
  if (!constants_.root() || i >= constants_.root()->items.size())
    return nullptr;
  return constants_.root()->items[i];
}

size_t TorchScriptArchive::numConstants() const {
  return constants_.root() ? constants_.root()->items.size() : 0;
}

Result<const SourceFile *> TorchScriptArchive::codeFile(const std::string &qualifiedModule) {
  auto it = code_.find(qualifiedModule);
  if (it != code_.end())
    return static_cast<const SourceFile *>(it->second.get());
  if (codeMissing_.count(qualifiedModule))
    return static_cast<const SourceFile *>(nullptr);
  std::string rel = "code/";
  for (char c : qualifiedModule)
    rel += c == '.' ? '/' : c;
  rel += ".py";
  const ZipEntry *e = zip_.find(prefix_ + rel);
  if (!e) {
    codeMissing_[qualifiedModule] = true;
    return static_cast<const SourceFile *>(nullptr);
  }
  if (e->uncompressedSize > (uint64_t(1) << 28))
    return error("CUVIL-E-CODE-SIZE", "'" + rel + "' is implausibly large");
  Result<std::string> text = zip_.read(*e);
  if (!text)
    return text.error();
  Result<std::unique_ptr<SourceFile>> parsed = parseSource(rel, std::move(*text));
  if (!parsed)
    return inputError(path() + ": " + parsed.error().message);
  const SourceFile *f = parsed->get();
  code_[qualifiedModule] = std::move(*parsed);
  return f;
}

Result<TensorData> TorchScriptArchive::tensorData(const PValue &t, bool fromConstants) {
  const PValue &s = *t.storage;
  std::string rel = (fromConstants ? "constants/" : "data/") + s.storageKey;
  const ZipEntry *e = zip_.find(prefix_ + rel);
  if (!e && !fromConstants)
    e = zip_.find(prefix_ + "constants/" + s.storageKey);
  if (!e)
    return error("CUVIL-E-ARCHIVE-STORAGE",
                 "storage record '" + rel + "' is missing");
  size_t esz = dtypeSize(s.dtype);
  uint64_t need;
  if (__builtin_mul_overflow(static_cast<uint64_t>(s.storageNumel), esz, &need) ||
      need > e->uncompressedSize)
    return error("CUVIL-E-ARCHIVE-STORAGE",
                 "storage '" + rel + "' declares " + std::to_string(s.storageNumel) +
                     " elements but its record holds " +
                     std::to_string(e->uncompressedSize) + " bytes");
  Result<int64_t> numel = checkedNumElements(t.sizes, s.dtype);
  if (!numel)
    return inputError(path() + ": tensor in '" + rel + "': " + numel.error().message);

  auto alloc = [](size_t n) {
    size_t rounded = (std::max<size_t>(n, 1) + 63) / 64 * 64;
    // Megabytes of weights on huge pages where the system gives them: a
    // page fault per 2 MiB, not per 4 KiB, as the record is read in.
    if (rounded >= (size_t(1) << 20))
      if (char *p = mapHugePages(rounded))
        return std::shared_ptr<char>(p, [rounded](char *q) { unmapHugePages(q, rounded); });
    return std::shared_ptr<char>(static_cast<char *>(std::aligned_alloc(64, rounded)),
                                 [](char *p) { std::free(p); });
  };
  TensorData out;
  out.dtype = s.dtype;
  out.shape = t.sizes;
  out.size = static_cast<size_t>(*numel) * esz;
  // Contiguous views of the whole record are read in place.
  bool contiguous = true;
  int64_t expect = 1;
  for (int64_t k = static_cast<int64_t>(t.sizes.size()) - 1; k >= 0; --k) {
    if (t.sizes[k] != 1 && t.strides[k] != expect)
      contiguous = false;
    expect *= t.sizes[k];
  }
  std::shared_ptr<char> record = alloc(e->uncompressedSize);
  if (!record)
    return error("CUVIL-E-ARCHIVE-STORAGE", "out of memory reading '" + rel + "'");
  if (Status st = zip_.readInto(*e, record.get()); !st)
    return st.error();
  if (contiguous && t.storageOffset == 0) {
    out.bytes = record;
    return out;
  }
  out.bytes = alloc(out.size);
  if (contiguous) {
    std::memcpy(out.bytes.get(), record.get() + t.storageOffset * esz, out.size);
    return out;
  }
  // Gather a strided view element by element (offsets were bounds-checked
  // when the pickle rebuilt the tensor).
  std::vector<int64_t> idx(t.sizes.size(), 0);
  for (int64_t flat = 0; flat < *numel; ++flat) {
    int64_t src = t.storageOffset;
    for (size_t k = 0; k < idx.size(); ++k)
      src += idx[k] * t.strides[k];
    std::memcpy(out.bytes.get() + flat * esz, record.get() + src * esz, esz);
    for (int64_t k = static_cast<int64_t>(idx.size()) - 1; k >= 0; --k) {
      if (++idx[k] < t.sizes[k])
        break;
      idx[k] = 0;
    }
  }
  return out;
}

TorchScriptArchive::DebugInfo *TorchScriptArchive::debugInfo(const SourceFile &file) {
  auto it = debug_.find(file.name);
  if (it != debug_.end())
    return it->second.get();
  std::unique_ptr<DebugInfo> info;
  if (const ZipEntry *e = zip_.find(prefix_ + file.name + ".debug_pkl")) {
    if (e->uncompressedSize < (uint64_t(1) << 28)) {
      Result<std::string> bytes = zip_.read(*e);
      if (bytes) {
        Result<Pickle> p = Pickle::parse(*bytes, file.name + ".debug_pkl");
        if (p) {
          info = std::make_unique<DebugInfo>();
          info->pickle = std::move(*p);
          const PValue *root = info->pickle.root();
          const PValue *records = root;
          // Newer archives: ("FORMAT_WITH_STRING_TABLE", strings, records).
          if (root->is(PValue::Kind::Tuple) && root->items.size() == 3 &&
              root->items[0]->is(PValue::Kind::String) &&
              root->items[0]->str == "FORMAT_WITH_STRING_TABLE") {
            info->stringTable = root->items[1];
            records = root->items[2];
          }
          if (records->is(PValue::Kind::Tuple) || records->is(PValue::Kind::List))
            for (const PValue *r : records->items)
              if ((r->is(PValue::Kind::Tuple)) && r->items.size() >= 2 &&
                  r->items[0]->is(PValue::Kind::Int) && r->items[0]->i >= 0 &&
                  r->items[1]->is(PValue::Kind::Tuple))
                info->records.push_back({static_cast<uint32_t>(r->items[0]->i), r->items[1]});
          std::stable_sort(info->records.begin(), info->records.end(),
                           [](const DebugRecord &a, const DebugRecord &b) {
                             return a.codeOffset < b.codeOffset;
                           });
        }
      }
    }
  }
  // Malformed debug records only lose locations (B5): no error.
  DebugInfo *raw = info.get();
  debug_[file.name] = std::move(info);
  return raw;
}

std::optional<OriginalLocation>
TorchScriptArchive::originalLocation(const SourceFile &file, uint32_t offset) {
  DebugInfo *info = debugInfo(file);
  if (!info || info->records.empty())
    return std::nullopt;
  // The last record starting at or before the offset covers it.
  auto it = std::upper_bound(info->records.begin(), info->records.end(), offset,
                             [](uint32_t off, const DebugRecord &r) { return off < r.codeOffset; });
  if (it == info->records.begin())
    return std::nullopt;
  const DebugRecord *rec = &*(it - 1);
  const PValue *range = rec->range; // (source, start, end)
  if (range->items.size() < 3 || !range->items[0]->is(PValue::Kind::Tuple) ||
      !range->items[1]->is(PValue::Kind::Int))
    return std::nullopt;
  const PValue *source = range->items[0];
  int64_t start = range->items[1]->i;
  if (source->items.size() != 3 || !source->items[2]->is(PValue::Kind::Int))
    return std::nullopt;
  OriginalLocation loc;
  std::string text;
  if (info->stringTable) {
    // ([text indices], filename index, starting line)
    const PValue *table = info->stringTable;
    auto str = [&](const PValue *idx) -> const std::string * {
      if (!idx->is(PValue::Kind::Int) || idx->i < 0 ||
          static_cast<size_t>(idx->i) >= table->items.size() ||
          !table->items[idx->i]->is(PValue::Kind::String))
        return nullptr;
      return &table->items[idx->i]->str;
    };
    const PValue *parts = source->items[0];
    if (!parts->is(PValue::Kind::List) && !parts->is(PValue::Kind::Tuple))
      return std::nullopt;
    for (const PValue *idx : parts->items) {
      const std::string *s = str(idx);
      if (!s)
        return std::nullopt;
      text += *s;
      if (text.size() > static_cast<size_t>(start))
        break; // enough to count lines up to `start`
    }
    const std::string *fname = str(source->items[1]);
    if (!fname)
      return std::nullopt;
    loc.file = *fname;
  } else {
    // (text, filename, starting line)
    if (!source->items[0]->is(PValue::Kind::String) ||
        !source->items[1]->is(PValue::Kind::String))
      return std::nullopt;
    text = source->items[0]->str;
    loc.file = source->items[1]->str;
  }
  if (loc.file.empty())
    return std::nullopt;
  int64_t line = source->items[2]->i;
  for (int64_t k = 0; k < start && k < static_cast<int64_t>(text.size()); ++k)
    line += text[k] == '\n';
  loc.line = static_cast<unsigned>(std::max<int64_t>(line, 0));
  return loc;
}

} // namespace cuvil::torchscript
