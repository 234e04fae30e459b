//===- Npy.cpp - NumPy .npy reader and writer -----------------------------===//
#include "support/Npy.h"

#include "support/AtomicFile.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <cctype>
#include <cstring>

namespace cuvil {
namespace {

/// A strict parser for the Python dict literal in a .npy header:
///   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  Status parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!eat('{'))
      return fail("expected '{'");
    while (true) {
      skipSpace();
      if (eat('}'))
        break;
      std::string key;
      if (Status st = parseString(key); !st)
        return st;
      skipSpace();
      if (!eat(':'))
        return fail("expected ':' after key '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (Status st = parseString(descr); !st)
          return st;
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (matchWord("True"))
          fortran = true;
        else if (matchWord("False"))
          fortran = false;
        else
          return fail("fortran_order must be True or False");
        haveOrder = true;
      } else if (key == "shape") {
        if (Status st = parseShape(shape); !st)
          return st;
        haveShape = true;
      } else {
        return fail("unexpected key '" + key + "'");
      }
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat('}'))
        break;
      return fail("expected ',' or '}'");
    }
    skipSpace();
    if (pos_ != s_.size())
      return fail("trailing characters after the header dict");
    if (!haveDescr || !haveOrder || !haveShape)
      return fail("header must define 'descr', 'fortran_order' and 'shape'");
    return Status::ok();
  }

private:
  Status fail(const std::string &msg) {
    return inputError("malformed .npy header (" + msg + " at offset " +
                      std::to_string(pos_) + ")");
  }
  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool matchWord(std::string_view w) {
    if (s_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  Status parseString(std::string &out) {
    char q = pos_ < s_.size() ? s_[pos_] : 0;
    if (q != '\'' && q != '"')
      return fail("expected a quoted string");
    ++pos_;
    size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos || end - pos_ > 64)
      return fail("unterminated or over-long string");
    out = std::string(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return Status::ok();
  }
  Status parseShape(std::vector<int64_t> &shape) {
    if (!eat('('))
      return fail("shape must be a tuple");
    while (true) {
      skipSpace();
      if (eat(')'))
        return Status::ok();
      if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
        return fail("shape entries must be non-negative integers");
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (__builtin_mul_overflow(v, int64_t(10), &v) ||
            __builtin_add_overflow(v, int64_t(s_[pos_] - '0'), &v))
          return fail("shape entry overflows int64");
        ++pos_;
      }
      // NumPy writes Python 2 longs as "3L" in old files.
      eat('L');
      shape.push_back(v);
      if (static_cast<int64_t>(shape.size()) > kMaxRank)
        return fail("rank exceeds " + std::to_string(kMaxRank));
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat(')'))
        return Status::ok();
      return fail("expected ',' or ')' in shape");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

uint32_t readLE(const unsigned char *p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

} // namespace

namespace {

/// A .npy file's header, parsed: where its data starts and how much it is.
struct NpyHeader {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  bool fortran = false;
  size_t dataStart = 0;
  uint64_t dataBytes = 0;
};

/// The size of the header (magic, version, length, dictionary) that
/// `prefix` (the file's first 12 bytes or fewer) announces.
Result<size_t> npyHeaderSize(std::string_view prefix, const std::string &name) {
  auto err = [&](const std::string &m) { return withId(inputError(name + ": " + m), "CUVIL-E-NPY-HEADER"); };
  static const char kMagic[] = "\x93NUMPY";
  if (prefix.size() < 10 || std::memcmp(prefix.data(), kMagic, 6) != 0)
    return err("not a NumPy .npy file (bad magic)");
  auto *u = reinterpret_cast<const unsigned char *>(prefix.data());
  int major = u[6];
  if (major == 1)
    return size_t(10) + readLE(u + 8, 2);
  if (major == 2 || major == 3) {
    if (prefix.size() < 12)
      return err("truncated .npy header");
    size_t len = readLE(u + 8, 4);
    if (len > 1 << 20)
      return err("the .npy header declares " + std::to_string(len) + " bytes (at most 1 MiB)");
    return size_t(12) + len;
  }
  return err("unsupported .npy format version " + std::to_string(major) + "." +
             std::to_string(u[7]) + " (supported 1.0 to 3.0)");
}

/// Parses the header, which `bytes` holds whole (npyHeaderSize bytes).
Result<NpyHeader> parseNpyHeader(std::string_view bytes, const std::string &name) {
  auto err = [&](const std::string &m) { return withId(inputError(name + ": " + m), "CUVIL-E-NPY-HEADER"); };
  Result<size_t> total = npyHeaderSize(bytes, name);
  if (!total)
    return total.error();
  size_t headerStart = reinterpret_cast<const unsigned char *>(bytes.data())[6] == 1 ? 10 : 12;
  if (*total > bytes.size())
    return err("truncated .npy header (declares " + std::to_string(*total - headerStart) +
               " bytes, file has " + std::to_string(bytes.size()) + ")");
  std::string_view header = bytes.substr(headerStart, *total - headerStart);
  NpyHeader h;
  std::string descr;
  if (Status st = HeaderParser(header).parse(descr, h.fortran, h.shape); !st)
    return err(st.error().message);
  std::optional<DType> dtype = parseNumpyDescr(descr);
  if (!dtype)
    return withId(inputError(name + ": unsupported NumPy dtype '" + descr +
                             "' (supported: bool, uint8, int8/16/32/64, float16/32/64, "
                             "little-endian)"),
                  "CUVIL-E-NPY-DTYPE");
  h.dtype = *dtype;
  Result<int64_t> numel = checkedNumElements(h.shape, h.dtype);
  if (!numel)
    return withId(inputError(name + ": " + numel.error().message), "CUVIL-E-NPY-SIZE");
  h.dataStart = *total;
  h.dataBytes = static_cast<uint64_t>(*numel) * dtypeSize(h.dtype);
  return h;
}

Error sizeMismatch(const NpyHeader &h, uint64_t have, const std::string &name) {
  return withId(inputError(name + ": data size mismatch: shape " + formatShape(h.shape, h.dtype) +
                           " needs " + std::to_string(h.dataBytes) + " bytes, the file holds " +
                           std::to_string(have) + " after its header"),
                "CUVIL-E-NPY-SIZE");
}

/// The tensor of a parsed header, `t` holding its data as stored.
Result<Tensor> npyTensor(const NpyHeader &h, Tensor t, const std::string &name) {
  int64_t numel = t.numElements();
  if (h.dtype == DType::Bool)
    for (int64_t i = 0; i < numel; ++i)
      if (t.data()[i] > 1)
        return withId(inputError(name + ": bool array holds a byte other than 0 or 1 at element " +
                                 std::to_string(i)),
                      "CUVIL-E-NPY-DATA");
  if (h.fortran && h.shape.size() > 1) {
    // Column-major data: element (i0..in) lives at sum(ik * fstride_k).
    Tensor rowMajor(h.dtype, h.shape);
    size_t esz = dtypeSize(h.dtype);
    std::vector<int64_t> fstrides(h.shape.size(), 1);
    for (size_t k = 1; k < h.shape.size(); ++k)
      fstrides[k] = fstrides[k - 1] * h.shape[k - 1];
    std::vector<int64_t> idx(h.shape.size(), 0);
    for (int64_t flat = 0; flat < numel; ++flat) {
      int64_t src = 0;
      for (size_t k = 0; k < h.shape.size(); ++k)
        src += idx[k] * fstrides[k];
      std::memcpy(rowMajor.data() + flat * esz, t.data() + src * esz, esz);
      for (int64_t k = static_cast<int64_t>(h.shape.size()) - 1; k >= 0; --k) {
        if (++idx[k] < h.shape[k])
          break;
        idx[k] = 0;
      }
    }
    return rowMajor;
  }
  return t;
}

/// Reads up to n bytes at the file's position (fewer only at its end).
Result<size_t> readSome(int fd, void *out, size_t n, const std::string &path) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, static_cast<char *>(out) + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return ioError("cannot read '" + path + "': " + std::strerror(errno));
    if (r == 0)
      break;
    got += static_cast<size_t>(r);
  }
  return got;
}

} // namespace

Result<Tensor> parseNpy(std::string_view bytes, const std::string &name) {
  Result<NpyHeader> h = parseNpyHeader(bytes, name);
  if (!h)
    return h.error();
  uint64_t have = bytes.size() - h->dataStart;
  if (have != h->dataBytes)
    return sizeMismatch(*h, have, name);
  Tensor t(h->dtype, h->shape);
  if (h->dataBytes)
    std::memcpy(t.data(), bytes.data() + h->dataStart, h->dataBytes);
  return npyTensor(*h, std::move(t), name);
}

bool NpyExpectation::accepts(DType dtype, const std::vector<int64_t> &s) const {
  if (dtype != this->dtype || s.size() != shape.size())
    return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (shape[i] >= 0 && shape[i] != s[i])
      return false;
  return true;
}

Result<Tensor> readNpy(const std::string &path, const NpyExpectation *expect) {
  // The header first, its sizes checked against the file's (and the
  // model's) before any data is read: the file may be a huge sparse one, a
  // device or a pipe.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ioError("cannot open '" + path + "': " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return ioError("cannot stat '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return ioError("cannot read '" + path + "': it is a directory");
  std::string head(12, '\0');
  Result<size_t> got = readSome(fd, head.data(), head.size(), path);
  if (!got)
    return got.error();
  head.resize(*got);
  Result<size_t> headerSize = npyHeaderSize(head, path);
  if (!headerSize)
    return headerSize.error();
  size_t have = head.size();
  head.resize(*headerSize);
  if (*headerSize > have) {
    Result<size_t> more = readSome(fd, head.data() + have, *headerSize - have, path);
    if (!more)
      return more.error();
    head.resize(have + *more);
  }
  Result<NpyHeader> h = parseNpyHeader(head, path);
  if (!h)
    return h.error();
  if (expect && !expect->accepts(h->dtype, h->shape))
    return withId(inputError("'" + path + "' holds " + formatShape(h->shape, h->dtype) + "; " +
                             expect->what + " is " + formatShape(expect->shape, expect->dtype)),
                  "CUVIL-E-INPUT-SHAPE");
  if (S_ISREG(st.st_mode) && uint64_t(st.st_size) - h->dataStart != h->dataBytes)
    return sizeMismatch(*h, uint64_t(st.st_size) - h->dataStart, path);
  if (S_ISREG(st.st_mode)) {
    Tensor t(h->dtype, h->shape);
    Result<size_t> n = readSome(fd, t.data(), h->dataBytes, path);
    if (!n)
      return n.error();
    if (*n != h->dataBytes) // the file shrank while read
      return sizeMismatch(*h, *n, path);
    return npyTensor(*h, std::move(t), path);
  }
  // A pipe or a device: read in chunks as the data comes, one byte more
  // than declared (a longer stream is an error), never allocating what a
  // header merely claims.
  std::vector<uint8_t> data;
  uint64_t want = h->dataBytes + 1;
  while (data.size() < want) {
    size_t at = data.size();
    data.resize(at + std::min<uint64_t>(want - at, uint64_t(64) << 20));
    Result<size_t> n = readSome(fd, data.data() + at, data.size() - at, path);
    if (!n)
      return n.error();
    data.resize(at + *n);
    if (*n == 0)
      break;
  }
  if (data.size() != h->dataBytes)
    return sizeMismatch(*h, data.size(), path);
  Tensor t(h->dtype, h->shape);
  if (h->dataBytes)
    std::memcpy(t.data(), data.data(), h->dataBytes);
  return npyTensor(*h, std::move(t), path);
}

std::string serializeNpy(const Tensor &t) {
  std::string_view descr = dtypeNumpyDescr(t.dtype());
  assert(!descr.empty() && "dtype has no NumPy equivalent");
  std::string dict = "{'descr': '" + std::string(descr) +
                     "', 'fortran_order': False, 'shape': (";
  for (int64_t i = 0; i < t.rank(); ++i)
    dict += std::to_string(t.dim(i)) + (t.rank() == 1 || i + 1 < t.rank() ? ", " : "");
  if (t.rank() == 1)
    dict.pop_back(); // "(3, )" -> "(3,)"
  dict += "), }";
  // Pad with spaces so that the data starts at a multiple of 64 bytes, and
  // end with a newline, as NumPy does.
  size_t total = 10 + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(dict.size() & 0xff));
  out.push_back(static_cast<char>((dict.size() >> 8) & 0xff));
  out += dict;
  out.append(reinterpret_cast<const char *>(t.data()), t.byteSize());
  return out;
}

Status writeNpy(const std::string &path, const Tensor &t) {
  if (t.dtype() == DType::BFloat16)
    return inputError("cannot write '" + path +
                      "': bf16 has no NumPy dtype (cast to f32 first)");
  return writeFileAtomically(path, serializeNpy(t));
}

} // namespace cuvil
