//===- CompileCache.cpp - cuvil-export's compile cache --------------------===//
#include "driver/CompileCache.h"

#include "support/AtomicFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

namespace mlir::cuvil {

namespace {

std::string hex(llvm::ArrayRef<uint8_t> bytes) {
  static const char *digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string sha256(llvm::StringRef data) {
  llvm::SHA256 h;
  h.update(data);
  return hex(h.final());
}

// An entry: a header line with the digest of the payload, then the payload.
constexpr llvm::StringLiteral kMagic = "cuvil-cache-v1 ";

} // namespace

std::optional<std::string> CompileCache::key(const std::string &modelPath,
                                             const std::vector<std::string> &parts,
                                             const std::vector<std::string> &files) {
  auto model = llvm::MemoryBuffer::getFile(modelPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!model)
    return std::nullopt;
  llvm::SHA256 h;
  auto add = [&](llvm::StringRef s) {
    uint64_t n = s.size();
    h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(&n), sizeof n));
    h.update(s);
  };
  add((*model)->getBuffer());
  for (const std::string &p : parts)
    add(p);
  for (const std::string &f : files) {
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(f, st))
      add(f + ": missing");
    else
      add(f + ": " + std::to_string(st.getSize()) + " " +
          std::to_string(st.getLastModificationTime().time_since_epoch().count()));
  }
  return hex(h.final());
}

std::string CompileCache::entryPath(const std::string &key) const {
  llvm::SmallString<256> p(dir_);
  llvm::sys::path::append(p, key.substr(0, 2), key);
  return std::string(p);
}

std::optional<std::string> CompileCache::lookup(const std::string &key) const {
  std::string path = entryPath(key);
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return std::nullopt;
  llvm::StringRef data = (*file)->getBuffer();
  size_t newline = data.find('\n');
  if (!data.starts_with(kMagic) || newline == llvm::StringRef::npos) {
    spdlog::warn("compile cache: ignoring the corrupt entry '{}'", path);
    return std::nullopt;
  }
  llvm::StringRef digest = data.slice(kMagic.size(), newline);
  llvm::StringRef payload = data.drop_front(newline + 1);
  if (digest != sha256(payload)) {
    spdlog::warn("compile cache: ignoring the corrupt entry '{}'", path);
    return std::nullopt;
  }
  return payload.str();
}

void CompileCache::store(const std::string &key, const std::string &bytes) const {
  std::string path = entryPath(key);
  if (std::error_code ec = llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path))) {
    spdlog::warn("compile cache: cannot create '{}': {}",
                 llvm::sys::path::parent_path(path).str(), ec.message());
    return;
  }
  std::string entry = (kMagic + sha256(bytes) + "\n").str() + bytes;
  if (::cuvil::Status s = ::cuvil::writeFileAtomically(path, entry); !s)
    spdlog::warn("compile cache: cannot store '{}': {}", path, s.error().message);
}

} // namespace mlir::cuvil
