//===- Npz.cpp - NumPy .npz archives (numpy.savez) ------------------------===//
#include "frontend/torchscript/Npz.h"

#include "frontend/torchscript/ZipArchive.h"
#include "support/AtomicFile.h"
#include "support/Npy.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>

namespace cuvil {
namespace {

/// N for "input<N>"/"arr_<N>", else -1.
long indexOf(const std::string &name) {
  for (const char *prefix : {"input", "arr_"}) {
    std::string p = prefix;
    if (name.size() > p.size() && name.size() - p.size() < 10 && name.compare(0, p.size(), p) == 0 &&
        std::all_of(name.begin() + p.size(), name.end(), [](unsigned char c) { return std::isdigit(c); }))
      return std::stol(name.substr(p.size()));
  }
  return -1;
}

void put16(std::string &s, uint32_t v) {
  s += char(v & 0xff);
  s += char((v >> 8) & 0xff);
}
void put32(std::string &s, uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}

} // namespace

Result<std::vector<std::pair<std::string, Tensor>>> readNpz(const std::string &path) {
  Result<torchscript::ZipArchive> zip = torchscript::ZipArchive::open(path);
  if (!zip)
    return zip.error();
  std::vector<std::pair<std::string, const torchscript::ZipEntry *>> entries;
  for (const torchscript::ZipEntry &e : zip->entries()) {
    if (e.name.size() < 5 || e.name.compare(e.name.size() - 4, 4, ".npy") != 0)
      return inputError("'" + path + "': entry '" + e.name + "' is not an .npy array");
    entries.emplace_back(e.name.substr(0, e.name.size() - 4), &e);
  }
  if (entries.empty())
    return inputError("'" + path + "': the .npz holds no arrays");
  if (std::all_of(entries.begin(), entries.end(), [](const auto &a) { return indexOf(a.first) >= 0; }))
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto &a, const auto &b) { return indexOf(a.first) < indexOf(b.first); });
  std::vector<std::pair<std::string, Tensor>> arrays;
  for (const auto &[name, entry] : entries) {
    Result<std::string> bytes = zip->read(*entry);
    if (!bytes)
      return bytes.error();
    Result<Tensor> t = parseNpy(*bytes, path + ":" + name);
    if (!t)
      return t.error();
    arrays.emplace_back(name, std::move(*t));
  }
  return arrays;
}

Status writeNpz(const std::string &path, const std::vector<std::pair<std::string, Tensor>> &arrays) {
  // Stored entries (method 0), no data descriptors; offsets below 4 GiB.
  std::string zip, directory;
  uint32_t count = 0;
  for (const auto &[name, tensor] : arrays) {
    std::string file = name + ".npy", data = serializeNpy(tensor);
    if (zip.size() + data.size() + file.size() + 30 > 0xffffffffull)
      return inputError("'" + path + "': more than 4 GiB of arrays (the writer makes no zip64)");
    uint32_t crc = 0;
    for (size_t done = 0; done < data.size();) { // zlib takes uInt lengths
      size_t n = std::min<size_t>(data.size() - done, 1u << 30);
      crc = uint32_t(::crc32(crc, reinterpret_cast<const Bytef *>(data.data() + done), uInt(n)));
      done += n;
    }
    uint32_t offset = uint32_t(zip.size());
    auto header = [&](std::string &s, bool central) {
      put32(s, central ? 0x02014b50 : 0x04034b50);
      if (central)
        put16(s, 20); // made by
      put16(s, 20);   // version needed
      put16(s, 0);    // flags
      put16(s, 0);    // stored
      put16(s, 0);    // time
      put16(s, 0x21); // date: 1980-01-01
      put32(s, crc);
      put32(s, uint32_t(data.size()));
      put32(s, uint32_t(data.size()));
      put16(s, uint32_t(file.size()));
      put16(s, 0); // extra
      if (central) {
        put16(s, 0); // comment
        put16(s, 0); // disk
        put16(s, 0); // internal attributes
        put32(s, 0); // external attributes
        put32(s, offset);
      }
      s += file;
    };
    header(zip, false);
    zip += data;
    header(directory, true);
    ++count;
  }
  uint32_t directoryOffset = uint32_t(zip.size());
  zip += directory;
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, count);
  put16(zip, count);
  put32(zip, uint32_t(directory.size()));
  put32(zip, directoryOffset);
  put16(zip, 0);
  return writeFileAtomically(path, zip);
}

} // namespace cuvil
