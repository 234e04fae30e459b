//===- SupportTest.cpp - DType, Tensor, .npy and atomic files -------------===//
#include "CatchCompat.h"

#include "support/ArenaPlacement.h"
#include "support/AtomicFile.h"
#include "support/DType.h"
#include "support/Npy.h"
#include "support/Tensor.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <limits>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace cuvil;

namespace {
/// A fresh empty directory under $TMPDIR, removed with its files at exit.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/cuvil-unit-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    if (DIR *d = ::opendir(path.c_str())) {
      while (dirent *e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
          ::unlink((path + "/" + e->d_name).c_str());
      ::closedir(d);
    }
    ::rmdir(path.c_str());
  }
  int countEntries() const {
    int n = 0;
    if (DIR *d = ::opendir(path.c_str())) {
      while (dirent *e = ::readdir(d))
        n += std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..");
      ::closedir(d);
    }
    return n;
  }
};

std::string npyHeader(const std::string &dict, size_t dataBytes) {
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  std::string d = dict + "\n";
  out += static_cast<char>(d.size() & 0xff);
  out += static_cast<char>(d.size() >> 8);
  return out + d + std::string(dataBytes, '\0');
}
} // namespace

TEST_CASE("dtype names round-trip", "[support][dtype]") {
  for (DType t : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16,
                  DType::Int32, DType::Int64, DType::Float16, DType::BFloat16,
                  DType::Float32, DType::Float64, DType::Complex64, DType::Complex128}) {
    CHECK(parseDType(dtypeName(t)) == t);
    if (t != DType::BFloat16)
      CHECK(parseNumpyDescr(dtypeNumpyDescr(t)) == t);
  }
  CHECK_FALSE(parseDType("f8"));
  CHECK_FALSE(parseNumpyDescr(">f4")); // big-endian is rejected
  CHECK(parseNumpyDescr("<c8") == DType::Complex64);
  CHECK(dtypeSize(DType::Complex128) == 16);
  CHECK(complexPart(DType::Complex64) == DType::Float32);
  CHECK_FALSE(isIntegral(DType::Complex64));
  CHECK_FALSE(parseNumpyDescr(">c8"));
  CHECK(parseNumpyDescr("=i8") == DType::Int64);
}

TEST_CASE("half and bfloat16 conversions are exact and round to nearest even",
          "[support][dtype]") {
  CHECK(floatToHalf(1.0f) == 0x3c00);
  CHECK(floatToHalf(-2.0f) == 0xc000);
  CHECK(floatToHalf(65504.0f) == 0x7bff);
  CHECK(floatToHalf(65520.0f) == 0x7c00); // rounds to infinity
  CHECK(floatToHalf(5.960464477539063e-08f) == 0x0001); // smallest subnormal
  CHECK(floatToHalf(1e-9f) == 0x0000);
  CHECK(floatToHalf(1.0f + 1.0f / 2048) == 0x3c00); // tie -> even
  CHECK(floatToHalf(1.0f + 3.0f / 2048) == 0x3c02); // tie -> even (up)
  CHECK(std::isnan(halfToFloat(floatToHalf(NAN))));
  for (uint32_t h = 0; h < 0x7c00; ++h) // every finite positive half
    CHECK(floatToHalf(halfToFloat(static_cast<uint16_t>(h))) == h);
  CHECK(floatToBf16(1.0f) == 0x3f80);
  CHECK(bf16ToFloat(0x3f80) == 1.0f);
  CHECK(floatToBf16(1.0f + 1.0f / 256) == 0x3f80); // tie -> even
  CHECK(std::isnan(bf16ToFloat(floatToBf16(NAN))));
}

TEST_CASE("tensor element conversions follow PyTorch", "[support][tensor]") {
  Tensor u8(DType::UInt8, {3});
  u8.setInt(0, 300);
  u8.setInt(1, -1);
  u8.setDouble(2, 3.9);
  CHECK(u8.getInt(0) == 44); // wraps modulo 256
  CHECK(u8.getInt(1) == 255);
  CHECK(u8.getInt(2) == 3); // truncates toward zero
  Tensor i8(DType::Int8, {1});
  i8.setInt(0, 200);
  CHECK(i8.getInt(0) == -56);
  Tensor i64(DType::Int64, {2});
  i64.setDouble(0, NAN);
  i64.setDouble(1, -7.9);
  CHECK(i64.getInt(0) == std::numeric_limits<int64_t>::min());
  CHECK(i64.getInt(1) == -7);
  Tensor b(DType::Bool, {2});
  b.setDouble(0, 0.5);
  b.setDouble(1, NAN);
  CHECK(b.getInt(0) == 1);
  CHECK(b.getInt(1) == 1);
  Tensor f = Tensor::fromDoubles(DType::Float32, {2}, {1.5, -2.5});
  Tensor asInt = f.cast(DType::Int32);
  CHECK(asInt.getInt(0) == 1);
  CHECK(asInt.getInt(1) == -2);
}

TEST_CASE("shapes are validated before allocation", "[support][tensor]") {
  CHECK(checkedNumElements({2, 3}, DType::Float32));
  CHECK(*checkedNumElements({}, DType::Float32) == 1);
  CHECK(*checkedNumElements({4, 0, 7}, DType::Float32) == 0);
  auto negative = checkedNumElements({2, -1}, DType::Float32);
  REQUIRE_FALSE(negative);
  CHECK(negative.error().message.find("negative") != std::string::npos);
  auto overflow = checkedNumElements({int64_t(1) << 40, int64_t(1) << 40},
                                     DType::Float32);
  REQUIRE_FALSE(overflow);
  CHECK(overflow.error().message.find("overflows") != std::string::npos);
  CHECK_FALSE(checkedNumElements({int64_t(1) << 40}, DType::Float64));
  CHECK_FALSE(checkedNumElements(std::vector<int64_t>(17, 1), DType::Float32));
}

TEST_CASE(".npy files round-trip for every dtype and shape", "[support][npy]") {
  for (DType t : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16,
                  DType::Int32, DType::Int64, DType::Float16, DType::Float32,
                  DType::Float64, DType::Complex64, DType::Complex128}) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {0}, {5}, {2, 3}, {1, 2, 0, 4}}) {
      Tensor x(t, shape);
      for (int64_t i = 0; i < x.numElements(); ++i)
        x.setInt(i, (i * 7) % 3);
      std::string bytes = serializeNpy(x);
      CHECK((bytes.size() - x.byteSize()) % 64 == 0); // data is 64-aligned
      Result<Tensor> y = parseNpy(bytes, "mem.npy");
      REQUIRE(y);
      CHECK(y->dtype() == t);
      CHECK(y->shape() == shape);
      CHECK(std::memcmp(x.data(), y->data(), x.byteSize()) == 0);
    }
  }
}

TEST_CASE("complex tensors are their (real, imaginary) pairs", "[support][tensor]") {
  Tensor c(DType::Complex64, {2, 3});
  for (int64_t i = 0; i < 12; ++i)
    reinterpret_cast<float *>(c.data())[i] = static_cast<float>(i);
  CHECK(c.byteSize() == 48);
  CHECK(c.getDouble(1) == 2.0); // an element as a number: its real part
  Result<Tensor> pairs = c.complexAsPairs();
  REQUIRE(pairs);
  CHECK(pairs->dtype() == DType::Float32);
  CHECK(pairs->shape() == std::vector<int64_t>{2, 3, 2});
  CHECK(pairs->getDouble(3) == 3.0);
  Result<Tensor> back = pairs->pairsAsComplex();
  REQUIRE(back);
  CHECK(back->dtype() == DType::Complex64);
  CHECK(back->shape() == std::vector<int64_t>{2, 3});
  CHECK(std::memcmp(back->data(), c.data(), c.byteSize()) == 0);
  CHECK(c.cast(DType::Complex128).cast(DType::Complex64).getDouble(5) == 10.0);
  CHECK(c.preview(1).find("0+1j") != std::string::npos);
  CHECK_FALSE(Tensor(DType::Float32, {3}).pairsAsComplex()); // last dim not 2
  CHECK_FALSE(Tensor(DType::Float32, {3}).complexAsPairs());
}

TEST_CASE(".npy reader rejects malformed files with a reason", "[support][npy]") {
  auto reject = [](const std::string &bytes, const std::string &reason) {
    Result<Tensor> t = parseNpy(bytes, "bad.npy");
    REQUIRE_FALSE(t);
    INFO(t.error().message);
    CHECK(t.error().message.find(reason) != std::string::npos);
    CHECK(t.error().message.find("bad.npy") == 0);
  };
  reject("", "bad magic");
  reject("PK\x03\x04 not numpy at all", "bad magic");
  reject(std::string("\x93NUMPY\x01\x00\xff\x00", 10) + "{", "truncated");
  reject(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 4),
         "data size mismatch");
  reject(npyHeader("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 4),
         "unsupported NumPy dtype");
  reject(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 0),
         "non-negative");
  reject(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                   "(99999999999999999999,), }", 0),
         "overflows");
  reject(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                   "(4294967296, 4294967296), }", 0),
         "overflows");
  reject(npyHeader("{'descr': '<f4', 'shape': (1,), }", 4), "must define");
  reject(npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
                   "'extra': 1}", 4),
         "unexpected key");
  std::string badBool =
      npyHeader("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 2);
  badBool.back() = 2;
  reject(badBool, "bool array");
  std::string v9 = npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
  v9[6] = 9;
  reject(v9, "unsupported .npy format version 9");
}

TEST_CASE(".npy Fortran-ordered arrays are transposed to row-major", "[support][npy]") {
  // Column-major 2x3 [[0,1,2],[3,4,5]] is stored as 0,3,1,4,2,5.
  std::string bytes = npyHeader(
      "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", 0);
  for (int32_t v : {0, 3, 1, 4, 2, 5})
    bytes.append(reinterpret_cast<const char *>(&v), 4);
  Result<Tensor> t = parseNpy(bytes, "f.npy");
  REQUIRE(t);
  for (int64_t i = 0; i < 6; ++i)
    CHECK(t->getInt(i) == i);
}

TEST_CASE("outputs are written atomically", "[support][io]") {
  TempDir dir;
  std::string path = dir.path + "/out.bin";
  REQUIRE(writeFileAtomically(path, "first"));
  REQUIRE(writeFileAtomically(path, "second"));
  Result<std::string> back = readFile(path);
  REQUIRE(back);
  CHECK(*back == "second");
  CHECK(dir.countEntries() == 1); // no temporary files are left behind

  Status missingDir = writeFileAtomically(dir.path + "/nope/out.bin", "x");
  REQUIRE_FALSE(missingDir);
  CHECK(missingDir.error().code == kExitIOError);
  CHECK(missingDir.error().message.find("does not exist") != std::string::npos);

  Status isDir = writeFileAtomically(dir.path, "x");
  REQUIRE_FALSE(isDir);
  CHECK(isDir.error().message.find("is a directory") != std::string::npos);

  Result<std::string> missing = readFile(dir.path + "/absent");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == kExitIOError);

  if (::geteuid() != 0) { // root ignores permissions
    ::chmod(dir.path.c_str(), 0500);
    Status readOnly = writeFileAtomically(path, "third");
    ::chmod(dir.path.c_str(), 0700);
    REQUIRE_FALSE(readOnly);
    CHECK(*readFile(path) == "second"); // the old file is intact
  }
}

TEST_CASE("output directories are created or rejected", "[support][io]") {
  TempDir dir;
  REQUIRE(prepareOutputDir(dir.path + "/a"));
  struct stat st;
  CHECK(::stat((dir.path + "/a").c_str(), &st) == 0);
  REQUIRE(writeFileAtomically(dir.path + "/file", "x"));
  Status notDir = prepareOutputDir(dir.path + "/file");
  REQUIRE_FALSE(notDir);
  CHECK(notDir.error().message.find("not a directory") != std::string::npos);
  ::rmdir((dir.path + "/a").c_str());
}

TEST_CASE("arena placement reuses memory only between disjoint lifetimes") {
  using cuvil::LiveBuffer;
  // a and b overlap in time; c starts after a ends and reuses a's bytes;
  // d overlaps everything.
  std::vector<LiveBuffer> buffers = {
      {128, 0, 2}, {64, 1, 3}, {128, 3, 5}, {64, 0, 5}};
  cuvil::ArenaPlacement p = cuvil::placeGreedyBySize(buffers);
  REQUIRE(p.offsets.size() == 4);
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      bool liveTogether = buffers[i].start <= buffers[j].end && buffers[j].start <= buffers[i].end;
      bool apart = p.offsets[i] + buffers[i].bytes <= p.offsets[j] ||
                   p.offsets[j] + buffers[j].bytes <= p.offsets[i];
      INFO("buffers " << i << " and " << j);
      CHECK((!liveTogether || apart));
    }
  // Largest first at 0, then the rest packed: 128 (a or c, sharing) + 64 + 64.
  CHECK(p.offsets[0] == 0);
  CHECK(p.offsets[2] == 0);
  CHECK(p.arenaBytes == 256);
  CHECK(cuvil::placeGreedyBySize({}).arenaBytes == 0);
}
