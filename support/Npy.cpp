//===- Npy.cpp - NumPy .npy reader and writer -----------------------------===//
#include "support/Npy.h"

#include "support/AtomicFile.h"

#include <cassert>
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

Result<Tensor> parseNpy(std::string_view bytes, const std::string &name) {
  auto err = [&](const std::string &m) { return inputError(name + ": " + m); };
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    return err("not a NumPy .npy file (bad magic)");
  auto *u = reinterpret_cast<const unsigned char *>(bytes.data());
  int major = u[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = readLE(u + 8, 2);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return err("truncated .npy header");
    headerLen = readLE(u + 8, 4);
    headerStart = 12;
  } else {
    return err("unsupported .npy format version " + std::to_string(major) +
               "." + std::to_string(u[7]) + " (supported 1.0 to 3.0)");
  }
  if (headerLen > 1 << 20 || headerStart + headerLen > bytes.size())
    return err("truncated .npy header (declares " + std::to_string(headerLen) +
               " bytes, file has " + std::to_string(bytes.size()) + ")");
  std::string_view header = bytes.substr(headerStart, headerLen);
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  if (Status st = HeaderParser(header).parse(descr, fortran, shape); !st)
    return err(st.error().message);
  std::optional<DType> dtype = parseNumpyDescr(descr);
  if (!dtype)
    return err("unsupported NumPy dtype '" + descr +
               "' (supported: bool, uint8, int8/16/32/64, float16/32/64, "
               "little-endian)");
  Result<int64_t> numel = checkedNumElements(shape, *dtype);
  if (!numel)
    return err(numel.error().message);
  size_t dataStart = headerStart + headerLen;
  uint64_t want = static_cast<uint64_t>(*numel) * dtypeSize(*dtype);
  uint64_t have = bytes.size() - dataStart;
  if (have != want)
    return err("data size mismatch: shape " + formatShape(shape, *dtype) +
               " needs " + std::to_string(want) + " bytes, file holds " +
               std::to_string(have));
  Tensor t(*dtype, shape);
  if (want)
    std::memcpy(t.data(), bytes.data() + dataStart, want);
  if (*dtype == DType::Bool)
    for (int64_t i = 0; i < *numel; ++i)
      if (t.data()[i] > 1)
        return err("bool array holds a byte other than 0 or 1 at element " +
                   std::to_string(i));
  if (fortran && shape.size() > 1) {
    // Column-major data: element (i0..in) lives at sum(ik * fstride_k).
    Tensor rowMajor(*dtype, shape);
    size_t esz = dtypeSize(*dtype);
    std::vector<int64_t> fstrides(shape.size(), 1);
    for (size_t k = 1; k < shape.size(); ++k)
      fstrides[k] = fstrides[k - 1] * shape[k - 1];
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t flat = 0; flat < *numel; ++flat) {
      int64_t src = 0;
      for (size_t k = 0; k < shape.size(); ++k)
        src += idx[k] * fstrides[k];
      std::memcpy(rowMajor.data() + flat * esz, t.data() + src * esz, esz);
      for (int64_t k = static_cast<int64_t>(shape.size()) - 1; k >= 0; --k) {
        if (++idx[k] < shape[k])
          break;
        idx[k] = 0;
      }
    }
    return rowMajor;
  }
  return t;
}

Result<Tensor> readNpy(const std::string &path) {
  Result<std::string> bytes = readFile(path);
  if (!bytes)
    return bytes.error();
  return parseNpy(*bytes, path);
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
