//===- ZipArchive.cpp - A strict reader of zip containers -----------------===//
#include "frontend/torchscript/ZipArchive.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>
#include <zlib.h>

namespace cuvil::torchscript {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kEocdSize = 22, kCentralSize = 46, kLocalSize = 30;
constexpr size_t kZip64EocdSize = 56, kZip64LocatorSize = 20;

uint16_t u16(const unsigned char *p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t u32(const unsigned char *p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) |
         (uint32_t(p[3]) << 24);
}
uint64_t u64(const unsigned char *p) {
  return uint64_t(u32(p)) | (uint64_t(u32(p + 4)) << 32);
}

/// What a non-zip file most likely is, for the error message (A2).
std::string sniffFormat(const unsigned char *p, size_t n) {
  auto starts = [&](const char *magic, size_t len) {
    return n >= len && std::memcmp(p, magic, len) == 0;
  };
  if (starts("\x7f" "ELF", 4))
    return "an ELF binary";
  if (starts("\x89PNG", 4))
    return "a PNG image";
  if (starts("\x80\x02", 2) || starts("\x80\x04", 2) || starts("\x80\x05", 2))
    return "a raw pickle (legacy torch.save output)";
  if (starts("PYTORCH1", 8))
    return "a PyTorch preview-release archive";
  if (n >= 262 && std::memcmp(p + 257, "ustar", 5) == 0)
    return "a tar archive (legacy torch.save output)";
  if (starts("\x93NUMPY", 6))
    return "a NumPy .npy file";
  if (starts("ONNX", 4) || (n >= 2 && p[0] == 0x08))
    return "possibly an ONNX/protobuf file";
  return "";
}

/// Entry names are opaque keys but must still be sane (A7).
std::string checkName(const std::string &name, size_t maxLen) {
  if (name.empty())
    return "is empty";
  if (name.size() > maxLen)
    return "is longer than " + std::to_string(maxLen) + " bytes";
  if (name.find('\0') != std::string::npos)
    return "contains a NUL byte";
  if (name.find('\\') != std::string::npos)
    return "contains a backslash";
  if (name.front() == '/')
    return "is an absolute path";
  if (name.size() >= 2 && name[1] == ':')
    return "starts with a drive letter";
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    std::string part = name.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part == "..")
      return "contains a '..' component";
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  // UTF-8 well-formedness (no overlongs check needed for keys).
  for (size_t i = 0; i < name.size();) {
    unsigned char c = name[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > name.size())
      return "is not valid UTF-8";
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(name[i + k]) >> 6) != 0x2)
        return "is not valid UTF-8";
    i += len;
  }
  return "";
}

} // namespace

ZipArchive::~ZipArchive() {
  if (fd_ >= 0)
    ::close(fd_);
}
ZipArchive::ZipArchive(ZipArchive &&o) noexcept
    : path_(std::move(o.path_)), fd_(o.fd_), fileSize_(o.fileSize_),
      entries_(std::move(o.entries_)), byName_(std::move(o.byName_)) {
  o.fd_ = -1;
}
ZipArchive &ZipArchive::operator=(ZipArchive &&o) noexcept {
  if (this != &o) {
    if (fd_ >= 0)
      ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = o.fd_;
    fileSize_ = o.fileSize_;
    entries_ = std::move(o.entries_);
    byName_ = std::move(o.byName_);
    o.fd_ = -1;
  }
  return *this;
}

Error ZipArchive::error(const std::string &code, const std::string &msg) const {
  return inputError(path_ + ": " + code + ": " + msg);
}

Status ZipArchive::preadExact(uint64_t offset, void *buf, size_t n,
                              const std::string &what) const {
  if (offset > fileSize_ || n > fileSize_ - offset)
    return error("CUVIL-E-ZIP-TRUNCATED",
                 what + " at offset " + std::to_string(offset) + " (" +
                     std::to_string(n) + " bytes) lies beyond the end of the " +
                     std::to_string(fileSize_) + "-byte file");
  char *p = static_cast<char *>(buf);
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return ioError(path_ + ": cannot read " + what + ": " + std::strerror(errno));
    }
    if (r == 0)
      return error("CUVIL-E-ZIP-TRUNCATED",
                   what + ": the file ended early (was it modified while "
                          "being read?)");
    done += static_cast<size_t>(r);
  }
  return Status::ok();
}

Result<ZipArchive> ZipArchive::open(const std::string &path,
                                    const ZipLimits &limits) {
  ZipArchive z;
  z.path_ = path;
  // O_NONBLOCK: a FIFO is refused below, not waited on at the open.
  z.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (z.fd_ < 0)
    return ioError("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(z.fd_, &st) != 0)
    return ioError("cannot stat '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return ioError("cannot read '" + path + "': it is a directory");
  if (!S_ISREG(st.st_mode))
    return inputError(path + ": CUVIL-E-ZIP-NOT-ZIP: not a regular file");
  z.fileSize_ = static_cast<uint64_t>(st.st_size);
  if (Status s = z.parse(limits); !s)
    return s.error();
  return z;
}

Status ZipArchive::parse(const ZipLimits &limits) {
  unsigned char head[512] = {};
  size_t headLen = static_cast<size_t>(std::min<uint64_t>(fileSize_, sizeof(head)));
  if (headLen)
    if (Status s = preadExact(0, head, headLen, "file header"); !s)
      return s;
  bool looksZip = headLen >= 4 && u32(head) == kLocalSig;
  if (!looksZip && !(headLen >= 4 && u32(head) == kEocdSig)) {
    // A zip that does not start at offset 0 has data prepended (A14).
    uint64_t probeLen = std::min<uint64_t>(fileSize_, 0xffff + kEocdSize);
    std::string probe(static_cast<size_t>(probeLen), '\0');
    if (probeLen >= kEocdSize &&
        preadExact(fileSize_ - probeLen, probe.data(), probe.size(), "archive tail")) {
      for (size_t i = 0; i + 4 <= probe.size(); ++i)
        if (u32(reinterpret_cast<const unsigned char *>(probe.data()) + i) == kEocdSig)
          return error("CUVIL-E-ZIP-PREPENDED",
                       "the file does not start with a zip entry but ends "
                       "like a zip archive: data was prepended to it (or it "
                       "is a polyglot file)");
    }
    std::string kind = sniffFormat(head, headLen);
    if (fileSize_ < kEocdSize)
      return error("CUVIL-E-ZIP-NOT-ZIP",
                   "not a zip archive (" + std::to_string(fileSize_) +
                       " bytes; a TorchScript archive is a zip file written "
                       "by torch.jit.save)");
    return error("CUVIL-E-ZIP-NOT-ZIP",
                 "not a zip archive" + (kind.empty() ? "" : ": it looks like " + kind) +
                     "; export the model with torch.jit.save (TorchScript)");
  }
  if (fileSize_ < kEocdSize)
    return error("CUVIL-E-ZIP-TRUNCATED",
                 "the archive is truncated (" + std::to_string(fileSize_) +
                     " bytes, smaller than an end-of-central-directory record)");

  // Find the end-of-central-directory record: the last one whose comment
  // reaches exactly the end of the file (a record followed by garbage means
  // a truncated, appended-to or polyglot file).
  uint64_t tailLen = std::min<uint64_t>(fileSize_, 0xffff + kEocdSize);
  std::string tail(static_cast<size_t>(tailLen), '\0');
  if (Status s = preadExact(fileSize_ - tailLen, tail.data(), tail.size(), "archive tail"); !s)
    return s;
  auto *t = reinterpret_cast<const unsigned char *>(tail.data());
  int64_t eocdPos = -1;
  bool sawSignature = false;
  for (int64_t i = static_cast<int64_t>(tailLen) - kEocdSize; i >= 0; --i) {
    if (u32(t + i) != kEocdSig)
      continue;
    sawSignature = true;
    uint16_t commentLen = u16(t + i + 20);
    if (static_cast<uint64_t>(i) + kEocdSize + commentLen == tailLen) {
      eocdPos = i;
      break;
    }
  }
  if (eocdPos < 0)
    return error("CUVIL-E-ZIP-TRUNCATED",
                 sawSignature
                     ? "the end-of-central-directory record does not end the "
                       "file (trailing data or a truncated archive)"
                     : "no end-of-central-directory record: the archive is "
                       "truncated (" + std::to_string(fileSize_) +
                           " bytes) or not a zip file");
  const unsigned char *e = t + eocdPos;
  uint64_t eocdOffset = fileSize_ - tailLen + static_cast<uint64_t>(eocdPos);
  uint64_t diskNo = u16(e + 4), cdDisk = u16(e + 6);
  uint64_t entriesOnDisk = u16(e + 8), entryCount = u16(e + 10);
  uint64_t cdSize = u32(e + 12), cdOffset = u32(e + 16);
  uint64_t cdEnd = eocdOffset; // where the central directory must end

  bool zip64 = entryCount == 0xffff || entriesOnDisk == 0xffff ||
               cdSize == 0xffffffff || cdOffset == 0xffffffff;
  if (eocdOffset >= kZip64LocatorSize) {
    unsigned char loc[kZip64LocatorSize];
    if (Status s = preadExact(eocdOffset - kZip64LocatorSize, loc, sizeof(loc), "zip64 locator"); !s)
      return s;
    if (u32(loc) == kZip64LocatorSig) {
      uint64_t recOffset = u64(loc + 8);
      if (u32(loc + 16) > 1 || u32(loc + 4) != 0)
        return error("CUVIL-E-ZIP-UNSUPPORTED", "multi-disk archives are not supported");
      if (recOffset > eocdOffset - kZip64LocatorSize ||
          eocdOffset - kZip64LocatorSize - recOffset < kZip64EocdSize)
        return error("CUVIL-E-ZIP-CORRUPT", "the zip64 locator points outside the archive");
      unsigned char rec[kZip64EocdSize];
      if (Status s = preadExact(recOffset, rec, sizeof(rec), "zip64 end record"); !s)
        return s;
      if (u32(rec) != kZip64EocdSig)
        return error("CUVIL-E-ZIP-CORRUPT", "bad zip64 end-of-central-directory signature");
      uint64_t diskNo64 = u32(rec + 16), cdDisk64 = u32(rec + 20);
      uint64_t onDisk64 = u64(rec + 24), count64 = u64(rec + 32);
      uint64_t size64 = u64(rec + 40), offset64 = u64(rec + 48);
      // Where the 32-bit record has a real value, it must agree (A6).
      if ((entryCount != 0xffff && entryCount != count64) ||
          (cdSize != 0xffffffff && cdSize != size64) ||
          (cdOffset != 0xffffffff && cdOffset != offset64))
        return error("CUVIL-E-ZIP-CORRUPT",
                     "the zip64 and classic end records disagree on the "
                     "central directory");
      diskNo = diskNo64;
      cdDisk = cdDisk64;
      entriesOnDisk = onDisk64;
      entryCount = count64;
      cdSize = size64;
      cdOffset = offset64;
      cdEnd = recOffset;
      zip64 = false;
    }
  }
  if (zip64)
    return error("CUVIL-E-ZIP-CORRUPT",
                 "the end record asks for zip64 values but there is no zip64 "
                 "end-of-central-directory record");
  if (diskNo != 0 || cdDisk != 0 || entriesOnDisk != entryCount)
    return error("CUVIL-E-ZIP-UNSUPPORTED", "multi-disk archives are not supported");
  if (entryCount > limits.maxEntries)
    return error("CUVIL-E-ZIP-TOO-LARGE",
                 std::to_string(entryCount) + " entries exceed the limit of " +
                     std::to_string(limits.maxEntries));
  if (cdOffset > cdEnd || cdSize != cdEnd - cdOffset)
    return error("CUVIL-E-ZIP-CORRUPT",
                 "the central directory (offset " + std::to_string(cdOffset) +
                     ", " + std::to_string(cdSize) +
                     " bytes) does not end at the end record (offset " +
                     std::to_string(cdEnd) + "): prepended or inserted data?");
  if (entryCount * kCentralSize > cdSize)
    return error("CUVIL-E-ZIP-CORRUPT",
                 "the central directory is too small for its " +
                     std::to_string(entryCount) + " entries");

  std::string cd(static_cast<size_t>(cdSize), '\0');
  if (Status s = preadExact(cdOffset, cd.data(), cd.size(), "central directory"); !s)
    return s;
  auto *c = reinterpret_cast<const unsigned char *>(cd.data());
  uint64_t pos = 0, total = 0;
  for (uint64_t i = 0; i < entryCount; ++i) {
    if (cdSize - pos < kCentralSize || u32(c + pos) != kCentralSig)
      return error("CUVIL-E-ZIP-CORRUPT",
                   "central directory entry " + std::to_string(i) + " is malformed");
    const unsigned char *h = c + pos;
    uint16_t flags = u16(h + 8), method = u16(h + 10);
    uint32_t crc = u32(h + 16);
    uint64_t csize = u32(h + 20), usize = u32(h + 24);
    uint16_t nameLen = u16(h + 28), extraLen = u16(h + 30), commentLen = u16(h + 32);
    uint16_t diskStart = u16(h + 34);
    uint32_t externalAttrs = u32(h + 38);
    uint64_t lho = u32(h + 42);
    uint64_t recLen = kCentralSize + nameLen + extraLen + commentLen;
    if (cdSize - pos < recLen)
      return error("CUVIL-E-ZIP-CORRUPT",
                   "central directory entry " + std::to_string(i) + " overruns the directory");
    std::string name(reinterpret_cast<const char *>(h + kCentralSize), nameLen);
    std::string bad = checkName(name, limits.maxNameLength);
    if (!bad.empty())
      return error("CUVIL-E-ZIP-BAD-NAME",
                   "entry " + std::to_string(i) + " has a name that " + bad);
    // Zip64 extended information replaces the fields that are all-ones.
    const unsigned char *x = h + kCentralSize + nameLen, *xEnd = x + extraLen;
    bool needU = usize == 0xffffffff, needC = csize == 0xffffffff, needO = lho == 0xffffffff;
    while (x + 4 <= xEnd) {
      uint16_t id = u16(x), len = u16(x + 2);
      if (x + 4 + len > xEnd)
        return error("CUVIL-E-ZIP-CORRUPT", "entry '" + name + "' has a malformed extra field");
      if (id == 0x0001) {
        const unsigned char *v = x + 4, *vEnd = v + len;
        auto take = [&](bool need, uint64_t &field) {
          if (!need)
            return true;
          if (v + 8 > vEnd)
            return false;
          field = u64(v);
          v += 8;
          return true;
        };
        if (!take(needU, usize) || !take(needC, csize) || !take(needO, lho))
          return error("CUVIL-E-ZIP-CORRUPT", "entry '" + name + "' has an inconsistent zip64 field");
        needU = needC = needO = false;
      }
      x += 4 + len;
    }
    if (needU || needC || needO)
      return error("CUVIL-E-ZIP-CORRUPT",
                   "entry '" + name + "' needs zip64 sizes but has no zip64 field");
    pos += recLen;

    if (diskStart != 0)
      return error("CUVIL-E-ZIP-UNSUPPORTED", "entry '" + name + "' is on another disk");
    if (flags & 0x1)
      return error("CUVIL-E-ZIP-UNSUPPORTED", "entry '" + name + "' is encrypted");
    if (method != 0 && method != 8)
      return error("CUVIL-E-ZIP-UNSUPPORTED",
                   "entry '" + name + "' uses compression method " +
                       std::to_string(method) + " (only stored and deflate are supported)");
    if (((externalAttrs >> 16) & 0170000) == 0120000)
      return error("CUVIL-E-ZIP-UNSUPPORTED", "entry '" + name + "' is a symbolic link");
    if (name.back() == '/') {
      if (usize != 0)
        return error("CUVIL-E-ZIP-CORRUPT", "directory entry '" + name + "' has data");
      continue; // directories carry nothing
    }
    if (usize > limits.maxEntrySize)
      return error("CUVIL-E-ZIP-TOO-LARGE",
                   "entry '" + name + "' declares " + std::to_string(usize) +
                       " bytes, above the limit of " + std::to_string(limits.maxEntrySize));
    if (method == 0 && csize != usize)
      return error("CUVIL-E-ZIP-CORRUPT",
                   "stored entry '" + name + "' has different compressed and "
                   "uncompressed sizes");
    if (method == 8 && usize > std::max<uint64_t>(csize * limits.maxCompressionRatio, 1 << 20))
      return error("CUVIL-E-ZIP-TOO-LARGE",
                   "entry '" + name + "' would expand " + std::to_string(csize) +
                       " bytes to " + std::to_string(usize) +
                       " (compression ratio above " +
                       std::to_string(limits.maxCompressionRatio) + ":1; a zip bomb?)");
    if (__builtin_add_overflow(total, usize, &total) || total > limits.maxTotalSize)
      return error("CUVIL-E-ZIP-TOO-LARGE",
                   "the entries declare more than " +
                       std::to_string(limits.maxTotalSize) + " bytes in total");
    if (byName_.count(name))
      return error("CUVIL-E-ZIP-DUPLICATE",
                   "entry '" + name + "' appears twice (ambiguous archive)");

    // The local header must agree with the central directory (A4).
    unsigned char lh[kLocalSize];
    if (lho >= cdOffset || cdOffset - lho < kLocalSize)
      return error("CUVIL-E-ZIP-CORRUPT",
                   "entry '" + name + "' has a local header outside the data area");
    if (Status s = preadExact(lho, lh, sizeof(lh), "local header of '" + name + "'"); !s)
      return s;
    if (u32(lh) != kLocalSig)
      return error("CUVIL-E-ZIP-CORRUPT",
                   "entry '" + name + "': no local header at offset " + std::to_string(lho));
    uint16_t lNameLen = u16(lh + 26), lExtraLen = u16(lh + 28);
    uint16_t lMethod = u16(lh + 8), lFlags = u16(lh + 6);
    std::string lName(lNameLen, '\0');
    if (lNameLen)
      if (Status s = preadExact(lho + kLocalSize, lName.data(), lNameLen, "local name of '" + name + "'"); !s)
        return s;
    if (lName != name || lMethod != method)
      return error("CUVIL-E-ZIP-CORRUPT",
                   "entry '" + name + "': the local header disagrees with the "
                   "central directory (name or method)");
    if (!(lFlags & 0x8)) {
      uint32_t lCrc = u32(lh + 14), lC = u32(lh + 18), lU = u32(lh + 22);
      bool sizesAgree = (lC == 0xffffffff || lC == csize) && (lU == 0xffffffff || lU == usize);
      if (lCrc != crc || !sizesAgree)
        return error("CUVIL-E-ZIP-CORRUPT",
                     "entry '" + name + "': the local header disagrees with the "
                     "central directory (CRC or sizes)");
    }
    ZipEntry entry;
    entry.name = name;
    entry.method = method;
    entry.crc32 = crc;
    entry.compressedSize = csize;
    entry.uncompressedSize = usize;
    entry.localHeaderOffset = lho;
    entry.dataOffset = lho + kLocalSize + lNameLen + lExtraLen;
    if (entry.dataOffset > cdOffset || csize > cdOffset - entry.dataOffset)
      return error("CUVIL-E-ZIP-TRUNCATED",
                   "entry '" + name + "' (" + std::to_string(csize) +
                       " bytes at offset " + std::to_string(entry.dataOffset) +
                       ") runs past the start of the central directory");
    byName_[name] = entries_.size();
    entries_.push_back(std::move(entry));
  }
  if (pos != cdSize)
    return error("CUVIL-E-ZIP-CORRUPT",
                 "the central directory holds more data than its entries");

  // No two entries may share bytes (A13: overlapping-entry zip bombs).
  std::vector<const ZipEntry *> byOffset;
  for (const ZipEntry &en : entries_)
    byOffset.push_back(&en);
  std::sort(byOffset.begin(), byOffset.end(), [](auto *a, auto *b) {
    return a->localHeaderOffset < b->localHeaderOffset;
  });
  for (size_t i = 1; i < byOffset.size(); ++i) {
    const ZipEntry *prev = byOffset[i - 1];
    if (prev->dataOffset + prev->compressedSize > byOffset[i]->localHeaderOffset)
      return error("CUVIL-E-ZIP-OVERLAP",
                   "entries '" + prev->name + "' and '" + byOffset[i]->name +
                       "' overlap");
  }
  return Status::ok();
}

const ZipEntry *ZipArchive::find(const std::string &name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &entries_[it->second];
}

namespace {

/// zlib's CRC-32 of `size` bytes (it takes uInt lengths: fed in chunks).
uint32_t crc32Serial(const char *data, uint64_t size) {
  uLong crc = ::crc32(0, nullptr, 0);
  for (uint64_t done = 0; done < size;) {
    uInt n = static_cast<uInt>(std::min<uint64_t>(size - done, 1u << 30));
    crc = ::crc32(crc, reinterpret_cast<const Bytef *>(data + done), n);
    done += n;
  }
  return static_cast<uint32_t>(crc);
}

/// The CRC-32 of a record: megabytes of weights in parts on the machine's
/// cores, the parts' CRCs combined (crc32_combine).
uint32_t crc32Of(const char *data, uint64_t size) {
  constexpr uint64_t kPart = uint64_t(1) << 20;
  uint64_t parts = std::min<uint64_t>({std::max(1u, std::thread::hardware_concurrency()), size / kPart, 8});
  if (parts < 2)
    return crc32Serial(data, size);
  uint64_t each = (size + parts - 1) / parts;
  std::vector<uint32_t> crcs(parts);
  std::vector<std::thread> threads;
  uint64_t begun = 1; // part 0 runs on this thread
  try {
    for (; begun < parts; ++begun)
      threads.emplace_back([&, p = begun] {
        uint64_t at = p * each;
        crcs[p] = crc32Serial(data + at, std::min(each, size - at));
      });
  } catch (const std::system_error &) { // no thread to be had: the rest here
  }
  crcs[0] = crc32Serial(data, each);
  for (uint64_t p = begun; p < parts; ++p)
    crcs[p] = crc32Serial(data + p * each, std::min(each, size - p * each));
  for (std::thread &t : threads)
    t.join();
  uLong crc = crcs[0];
  for (uint64_t p = 1; p < parts; ++p)
    crc = ::crc32_combine(crc, crcs[p], static_cast<z_off_t>(std::min(each, size - p * each)));
  return static_cast<uint32_t>(crc);
}

} // namespace

Status ZipArchive::readInto(const ZipEntry &entry, char *dest) const {
  uint32_t crc = 0;
  if (entry.method == 0) {
    if (Status s = preadExact(entry.dataOffset, dest, entry.uncompressedSize,
                              "entry '" + entry.name + "'");
        !s)
      return s;
    crc = crc32Of(dest, entry.uncompressedSize);
  } else {
    z_stream zs;
    std::memset(&zs, 0, sizeof(zs));
    if (int init = inflateInit2(&zs, -MAX_WBITS); init != Z_OK)
      return init == Z_MEM_ERROR ? error("CUVIL-E-OOM", "out of memory decompressing entry '" + entry.name + "'")
                                 : error("CUVIL-E-ZIP-CORRUPT", "cannot initialise inflate");
    std::string chunk(1 << 16, '\0');
    uint64_t readPos = 0, produced = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      if (zs.avail_in == 0) {
        if (readPos == entry.compressedSize)
          break;
        size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), entry.compressedSize - readPos));
        if (Status s = preadExact(entry.dataOffset + readPos, chunk.data(), n,
                                  "entry '" + entry.name + "'");
            !s) {
          inflateEnd(&zs);
          return s;
        }
        readPos += n;
        zs.next_in = reinterpret_cast<Bytef *>(chunk.data());
        zs.avail_in = static_cast<uInt>(n);
      }
      uint64_t room = entry.uncompressedSize - produced;
      // One spare byte detects data beyond the declared size.
      char spare;
      zs.next_out = reinterpret_cast<Bytef *>(room ? dest + produced : &spare);
      zs.avail_out = static_cast<uInt>(room ? std::min<uint64_t>(room, 1u << 30) : 1);
      uInt before = zs.avail_out;
      rc = inflate(&zs, Z_NO_FLUSH);
      uInt wrote = before - zs.avail_out;
      if (rc == Z_MEM_ERROR) { // zlib allocates its window on the first call
        inflateEnd(&zs);
        return error("CUVIL-E-OOM", "out of memory decompressing entry '" + entry.name + "'");
      }
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        inflateEnd(&zs);
        return error("CUVIL-E-ZIP-CORRUPT",
                     "entry '" + entry.name + "' is not valid deflate data");
      }
      if (!room && wrote) {
        inflateEnd(&zs);
        return error("CUVIL-E-ZIP-CORRUPT",
                     "entry '" + entry.name + "' inflates to more than its declared " +
                         std::to_string(entry.uncompressedSize) + " bytes");
      }
      produced += wrote;
      if (rc == Z_BUF_ERROR && zs.avail_in == 0 && readPos == entry.compressedSize)
        break;
    }
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || produced != entry.uncompressedSize)
      return error("CUVIL-E-ZIP-CORRUPT",
                   "entry '" + entry.name + "' inflates to " + std::to_string(produced) +
                       " bytes, not the declared " + std::to_string(entry.uncompressedSize));
    crc = crc32Of(dest, produced);
  }
  if (crc != entry.crc32)
    return error("CUVIL-E-ZIP-CRC",
                 "entry '" + entry.name + "' fails its CRC-32 check (corrupted data)");
  return Status::ok();
}

Result<std::string> ZipArchive::read(const ZipEntry &entry) const {
  std::string out(static_cast<size_t>(entry.uncompressedSize), '\0');
  if (Status s = readInto(entry, out.data()); !s)
    return s.error();
  return out;
}

} // namespace cuvil::torchscript
