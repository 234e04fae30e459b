//===- TuningDatabaseTest.cpp - Device profiles and the tuning database ---===//
//
// Round trips (binary and text), refusals (version, truncation, bad
// fields), merge's choice of record, shards and device keys.
//
//===----------------------------------------------------------------------===//
#include "support/AtomicFile.h"
#include "tuning/DeviceProfiles.h"
#include "tuning/TuningDatabase.h"

#include "CatchCompat.h"

#include <cstdio>
#include <fstream>
#include <algorithm>
#include <set>
#include <string>
#include <unistd.h>

using namespace cuvil;
using namespace cuvil::tuning;

namespace {

std::string tempPath(const std::string &name) {
  return "/tmp/cuvil-tuning-test-" + std::to_string(getpid()) + "-" + name;
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TuningRecord record(const std::string &sig, const std::string &variant, double ms,
                    const std::string &method = "measured") {
  TuningRecord r;
  r.set_signature(sig);
  r.set_device("x86_64-unknown-linux-gnu/znver4/00000000");
  r.set_compiler_version(compilerVersion());
  r.set_kernel("conv2d");
  r.set_variant(variant);
  r.set_best_ms(ms);
  r.set_baseline_kernel("conv2d");
  r.set_baseline_variant("im2col");
  r.set_baseline_ms(2.0);
  r.set_trials(3);
  r.set_method(method);
  return r;
}

} // namespace

TEST_CASE("tuning database: binary and text round trips, records sorted", "[tuning]") {
  TuningDatabase db;
  addRecord(db, record("sig-b", "pixel_rows", 1.0));
  addRecord(db, record("sig-a", "winograd_f4x4", 0.5));
  for (const std::string ext : {".db", ".textproto"}) {
    std::string path = tempPath("rt" + ext);
    REQUIRE(writeTuningDatabase(path, db));
    Result<TuningDatabase> back = readTuningDatabase(path);
    REQUIRE(back);
    REQUIRE(back->records_size() == 2);
    CHECK(back->records(0).signature() == "sig-a"); // sorted by key
    CHECK(back->records(1).variant() == "pixel_rows");
    CHECK(back->version() == kTuningDatabaseVersion);
    std::remove(path.c_str());
  }
  // The same records in another order: the same bytes.
  TuningDatabase other;
  addRecord(other, record("sig-a", "winograd_f4x4", 0.5));
  addRecord(other, record("sig-b", "pixel_rows", 1.0));
  std::string p1 = tempPath("o1.db"), p2 = tempPath("o2.db");
  REQUIRE(writeTuningDatabase(p1, db));
  REQUIRE(writeTuningDatabase(p2, other));
  CHECK(*readFile(p1, 1 << 20) == *readFile(p2, 1 << 20));
  std::remove(p1.c_str());
  std::remove(p2.c_str());
}

TEST_CASE("tuning database: damaged records cost only themselves, foreign files are refused", "[tuning]") {
  TuningDatabase db;
  for (int i = 0; i < 20; ++i)
    addRecord(db, record("signature number " + std::to_string(i), "im2col", 1.0 + i));
  std::string path = tempPath("c.db");
  REQUIRE(writeTuningDatabase(path, db));
  std::string bytes = *readFile(path, 1 << 20);
  REQUIRE(bytes.compare(0, 8, "CUVILTDB") == 0);

  // Cut inside a record: the records before it load, the report says so.
  writeBytes(path, bytes.substr(0, bytes.size() / 2));
  LoadReport cut;
  Result<TuningDatabase> truncated = readTuningDatabase(path, &cut);
  REQUIRE(truncated);
  CHECK(cut.truncated);
  CHECK(truncated->records_size() > 0);
  CHECK(truncated->records_size() < 20);
  CHECK(cut.summary().find("truncated") != std::string::npos);

  // A record garbled in place (its length intact): skipped and counted.
  std::string garbled = bytes;
  size_t at = garbled.find("signature number 7");
  REQUIRE(at != std::string::npos);
  garbled[at - 2] = '\xff'; // the field's tag and length inside the record
  garbled[at - 1] = '\xff';
  writeBytes(path, garbled);
  LoadReport g;
  Result<TuningDatabase> some = readTuningDatabase(path, &g);
  REQUIRE(some);
  CHECK(g.skipped == 1);
  CHECK(some->records_size() == 19);

  for (const std::string &foreign : {std::string(), std::string("\x89PNG\r\n\x1a\n garbage", 16),
                                     std::string("CUVILTDB\xff\xff\xff\xff\x0f")}) {
    writeBytes(path, foreign);
    CHECK_FALSE(readTuningDatabase(path));
  }

  std::string text = tempPath("bad.textproto");
  writeBytes(text, "version: 99\n");
  Result<TuningDatabase> f = readTuningDatabase(text);
  REQUIRE_FALSE(f);
  CHECK(f.error().message.find("version 99") != std::string::npos);
  // Bad records of a text database: skipped and counted, duplicates merged.
  writeBytes(text, "version: 1\nrecords { signature: \"x\" device: \"d\" compiler_version: \"v\" kernel: \"k\" "
                   "best_ms: -1 method: \"measured\" }\n"
                   "records { signature: \"y\" device: \"d\" compiler_version: \"v\" kernel: \"k\" "
                   "best_ms: 2 method: \"measured\" }\n"
                   "records { signature: \"y\" device: \"d\" compiler_version: \"v\" kernel: \"k\" "
                   "best_ms: 1 method: \"measured\" }\n");
  LoadReport t;
  Result<TuningDatabase> skipped = readTuningDatabase(text, &t);
  REQUIRE(skipped);
  CHECK(t.skipped == 1);
  CHECK(t.merged == 1);
  REQUIRE(skipped->records_size() == 1);
  CHECK(skipped->records(0).best_ms() == 1);
  writeBytes(text, "version: 1\nrecords { nonsense: 3 }\n");
  Result<TuningDatabase> syntax = readTuningDatabase(text);
  REQUIRE_FALSE(syntax);
  CHECK(syntax.error().message.find("line 2") != std::string::npos);
  CHECK_FALSE(readTuningDatabase(tempPath("missing.db")));
  std::remove(path.c_str());
  std::remove(text.c_str());
}

TEST_CASE("tuning database: merge keeps the best record per key", "[tuning]") {
  TuningDatabase db;
  addRecord(db, record("s", "im2col", 2.0));
  addRecord(db, record("s", "winograd_f4x4", 1.0));
  addRecord(db, record("s", "pixel_rows", 0.5, "cost_model")); // measured beats the model
  REQUIRE(db.records_size() == 1);
  CHECK(db.records(0).variant() == "winograd_f4x4");
  TuningRecord elsewhere = record("s", "pixel_rows", 0.1);
  elsewhere.set_device("aarch64-unknown-linux-gnu/neoverse-n1/00000000");
  addRecord(db, elsewhere); // another key
  CHECK(db.records_size() == 2);
  // Ties are broken the same way whatever the order.
  TuningRecord a = record("t", "im2col", 1.0), b = record("t", "pixel_rows", 1.0);
  CHECK(betterRecord(a, b) != betterRecord(b, a));
}

TEST_CASE("tuning database: lookups skip other devices and compiler versions", "[tuning]") {
  TuningDatabase db;
  addRecord(db, record("s1", "im2col", 1.0));
  TuningRecord old = record("s2", "im2col", 1.0);
  old.set_compiler_version("cuvil 0.0.1 kernels v0");
  addRecord(db, old);
  TuningRecord other = record("s3", "im2col", 1.0);
  other.set_device("x86_64-unknown-linux-gnu/x86-64-v3/00000000");
  addRecord(db, other);
  RecordIndex index = indexRecords(db, "x86_64-unknown-linux-gnu/znver4/00000000");
  CHECK(index.bySignature.size() == 1);
  CHECK(index.bySignature.count("s1") == 1);
  CHECK(index.otherVersion.size() == 1);
  CHECK(index.otherDevice.size() == 1);
}

TEST_CASE("tuning database: shards and device keys", "[tuning]") {
  CHECK(parseShard("1/1"));
  CHECK(parseShard("2/4"));
  for (const char *bad : {"3/2", "0/2", "1/0", "1", "/2", "a/b", "1/2/3", "-1/2", ""})
    CHECK_FALSE(parseShard(bad));
  // Every signature in exactly one shard, the same each time.
  std::set<unsigned> seen;
  for (int i = 0; i < 64; ++i) {
    std::string sig = "sig" + std::to_string(i);
    unsigned s = shardOf(sig, 4);
    CHECK(s >= 1);
    CHECK(s <= 4);
    CHECK(shardOf(sig, 4) == s);
    seen.insert(s);
  }
  CHECK(seen.size() == 4);
  CHECK(shardOf("anything", 1) == 1);
  CHECK(deviceKey("t", "c", "+a,+b") == deviceKey("t", "c", "+a,+b"));
  CHECK(deviceKey("t", "c", "+a,+b") != deviceKey("t", "c", "+a,-b"));
}

TEST_CASE("device profiles: built-ins, files, refusals", "[tuning]") {
  std::vector<std::string> names = builtinProfileNames();
  for (const char *want : {"x86-64-v3", "x86-64-v4", "sapphirerapids", "znver4", "aarch64-v8.2", "neoverse-n1"})
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  for (const std::string &n : names) {
    Result<DeviceProfile> p = builtinProfile(n);
    REQUIRE(p);
    CHECK(checkDeviceProfile(*p, n));
    // CPUs have an fp32 peak; the NPU computes int8 (its FP16 mode aside).
    CHECK((p->target() == "npu" ? p->int8_gops_core() : p->fp32_gflops_core()) > 0);
  }
  for (const char *npu : {"npu-32x32", "npu-16x16", "npu-64x64", "npu-32x32-small-sram", "npu-32x32-slow-dram"}) {
    Result<DeviceProfile> p = builtinProfile(npu);
    REQUIRE(p);
    CHECK(p->target() == "npu");
    CHECK(p->cpu() == npu); // the configuration --target npu compiles for
  }
  Result<DeviceProfile> arm = builtinProfile("aarch64-v8.2");
  REQUIRE(arm);
  CHECK(arm->target() == "aarch64");
  CHECK(featureString(*arm).find("+dotprod") != std::string::npos);
  Result<DeviceProfile> unknown = loadDeviceProfile("pentium");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("znver4") != std::string::npos); // lists the built-ins

  std::string path = tempPath("p.textproto");
  REQUIRE(writeDeviceProfile(path, *arm));
  Result<DeviceProfile> back = loadDeviceProfile(path);
  REQUIRE(back);
  CHECK(back->name() == "aarch64-v8.2");
  writeBytes(path, "version: 2\nname: \"x\" target: \"x86_64\" cpu: \"znver4\"\n");
  CHECK_FALSE(loadDeviceProfile(path));
  writeBytes(path, "version: 1\nname: \"x\" target: \"x86_64\" cpu: \"znver4\" features: \"+avx2\"\n");
  CHECK_FALSE(loadDeviceProfile(path)); // a sign in a feature name
  writeBytes(path, "version: 1\nname: \"x\" target: \"x86_64\" cpu: \"znver4\" fp32_gflops_core: -3\n");
  CHECK_FALSE(loadDeviceProfile(path));
  std::string bin = tempPath("p.pb");
  writeBytes(bin, "\xff\xff\xff\xff garbage");
  CHECK_FALSE(loadDeviceProfile(bin));
  std::remove(path.c_str());
  std::remove(bin.c_str());
}
