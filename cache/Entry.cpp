//===- Entry.cpp - One compile-cache entry and its key --------------------===//
#include "cache/Entry.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cuvil::cache {

namespace {

// Format: header lines, a blank line, the payload.
//   cuvil-cache 2
//   kind lib
//   key <hex>
//   size <payload bytes>
//   payload <hex digest of the payload>
//   material <n lines>
//   <n material lines>
//   pad <spaces: the payload starts 64-byte aligned>
//   (blank)
constexpr llvm::StringLiteral kMagic = "cuvil-cache 2\n";

std::string hex(llvm::ArrayRef<uint8_t> bytes) {
  static const char *digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

/// Takes the next line (without its newline) off `rest`.
bool nextLine(llvm::StringRef &rest, llvm::StringRef &line) {
  size_t nl = rest.find('\n');
  if (nl == llvm::StringRef::npos)
    return false;
  line = rest.take_front(nl);
  rest = rest.drop_front(nl + 1);
  return true;
}

bool field(llvm::StringRef &rest, llvm::StringRef name, llvm::StringRef &value) {
  llvm::StringRef line;
  if (!nextLine(rest, line) || !line.consume_front(name) || !line.consume_front(" "))
    return false;
  value = line;
  return true;
}

struct Header {
  llvm::StringRef kind, key, payloadDigest;
  uint64_t size = 0;
  KeyMaterial material;
  llvm::StringRef payload;
};

std::optional<Header> parseHeader(llvm::StringRef bytes, std::string &why) {
  Header h;
  llvm::StringRef rest = bytes, size, count;
  if (!rest.consume_front(kMagic)) {
    why = "not a cuvil cache entry of format 2";
    return std::nullopt;
  }
  uint64_t lines = 0;
  if (!field(rest, "kind", h.kind) || !field(rest, "key", h.key) || !field(rest, "size", size) ||
      !field(rest, "payload", h.payloadDigest) || !field(rest, "material", count) ||
      size.getAsInteger(10, h.size) || count.getAsInteger(10, lines) || lines > 4096) {
    why = "malformed header";
    return std::nullopt;
  }
  for (uint64_t i = 0; i < lines; ++i) {
    llvm::StringRef line;
    if (!nextLine(rest, line)) {
      why = "truncated header";
      return std::nullopt;
    }
    h.material.parts.push_back(line.str());
  }
  llvm::StringRef blank;
  if (!nextLine(rest, blank) || !blank.starts_with("pad") || !nextLine(rest, blank) ||
      !blank.empty()) {
    why = "malformed header";
    return std::nullopt;
  }
  h.payload = rest;
  return h;
}

} // namespace

std::string digest(llvm::StringRef data) {
  return hex(llvm::BLAKE3::hash(llvm::arrayRefFromStringRef(data)));
}

std::optional<std::string> digestFile(const std::string &path) {
  // Only a regular file has an end: a device or a pipe (--model /dev/zero)
  // would be read forever. O_NONBLOCK: opening a FIFO does not wait.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return std::nullopt;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  llvm::BLAKE3 h;
  std::vector<uint8_t> buffer(1 << 20);
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      ok = false;
    if (n <= 0)
      break;
    h.update(llvm::ArrayRef<uint8_t>(buffer.data(), size_t(n)));
  }
  ::close(fd);
  if (!ok)
    return std::nullopt;
  return hex(h.final());
}

std::string KeyMaterial::key() const {
  llvm::BLAKE3 h;
  for (const std::string &p : parts) {
    uint64_t n = p.size();
    h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(&n), sizeof n));
    h.update(llvm::arrayRefFromStringRef(p));
  }
  return hex(h.final());
}

std::string KeyMaterial::text() const {
  std::string out;
  for (const std::string &p : parts)
    out += p + "\n";
  return out;
}

KeyMaterial KeyMaterial::parse(llvm::StringRef text) {
  KeyMaterial m;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef l : lines)
    m.parts.push_back(l.str());
  return m;
}

const char *entryKindName(EntryKind kind) {
  return kind == EntryKind::Library ? "lib" : kind == EntryKind::Code ? "code" : "plan";
}

std::string encodeEntryHeader(EntryKind kind, const KeyMaterial &material, llvm::StringRef payload) {
  std::string out = kMagic.str();
  out += "kind " + std::string(entryKindName(kind)) + "\n";
  out += "key " + material.key() + "\n";
  out += "size " + std::to_string(payload.size()) + "\n";
  out += "payload " + digest(payload) + "\n";
  out += "material " + std::to_string(material.parts.size()) + "\n";
  out += material.text();
  // The payload starts 64-byte aligned (an ELF reader needs 8).
  size_t used = out.size() + 6; // "pad " + "\n" + the blank line
  out += "pad " + std::string((64 - used % 64) % 64, ' ') + "\n\n";
  return out;
}

std::string encodeEntry(EntryKind kind, const KeyMaterial &material, llvm::StringRef payload) {
  std::string out = encodeEntryHeader(kind, material, payload);
  out.reserve(out.size() + payload.size());
  out += payload;
  return out;
}

DecodedEntry decodeEntry(llvm::StringRef bytes, EntryKind kind, const std::string &key) {
  DecodedEntry d;
  std::string why;
  std::optional<Header> h = parseHeader(bytes, why);
  if (!h) {
    d.problem = EntryProblem::Corrupt;
    d.detail = why;
    return d;
  }
  if (h->kind != entryKindName(kind) || h->key != key || h->material.key() != key) {
    d.problem = EntryProblem::OtherKey;
    d.detail = "the entry is of another key (" + h->kind.str() + " " + h->key.str() + ")";
    return d;
  }
  if (h->payload.size() != h->size || digest(h->payload) != h->payloadDigest) {
    d.problem = EntryProblem::Corrupt;
    d.detail = h->payload.size() != h->size ? "truncated" : "its payload does not match its digest";
    return d;
  }
  d.payload = h->payload;
  d.material = std::move(h->material);
  return d;
}

std::optional<std::pair<std::string, KeyMaterial>> peekEntry(llvm::StringRef bytes, std::string *key) {
  std::string why;
  std::optional<Header> h = parseHeader(bytes, why);
  if (!h)
    return std::nullopt;
  if (key)
    *key = h->key.str();
  return std::make_pair(h->kind.str(), std::move(h->material));
}

} // namespace cuvil::cache
