//===- TuningDatabase.cpp - The tuning database: read, write, merge ------===//
#include "tuning/TuningDatabase.h"

#include "support/AtomicFile.h"
#include "tuning/DeviceProfiles.h"

#include "runtime/include/cuvil/kernel_abi.h"
#include "support/Tool/Version.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cuvil::tuning {
namespace {

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

struct FirstError : google::protobuf::io::ErrorCollector {
  std::string message;
  void AddError(int line, int column, const std::string &msg) override {
    if (message.empty())
      message = "line " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + msg;
  }
};

constexpr char kMagic[] = "CUVILTDB";
constexpr size_t kMagicSize = sizeof kMagic - 1;

/// Why `r` cannot be used, or "".
std::string badRecord(const TuningRecord &r) {
  if (r.signature().empty() || r.device().empty() || r.compiler_version().empty())
    return "it lacks its signature, device or compiler version";
  if (r.kernel().empty())
    return "it names no kernel";
  if (!std::isfinite(r.best_ms()) || r.best_ms() < 0)
    return "its time is negative or not finite";
  if (r.method() != "measured" && r.method() != "cost_model")
    return "its method is '" + r.method() + "' (measured or cost_model)";
  return "";
}

Status checkVersion(const std::string &path, const TuningDatabase &db) {
  if (db.version() != kTuningDatabaseVersion)
    return inputError("tuning database '" + path + "': version " + std::to_string(db.version()) +
                      " is not supported (this compiler reads version " +
                      std::to_string(kTuningDatabaseVersion) + ")");
  return Status();
}

/// Adds the good records of `records` to `db`, counting the others.
void addGood(TuningDatabase &db, const TuningRecord &r, int number, LoadReport &report) {
  if (std::string why = badRecord(r); !why.empty()) {
    ++report.skipped;
    if (report.reasons.size() < 3)
      report.reasons.push_back("record " + std::to_string(number) + ": " + why);
    return;
  }
  int before = db.records_size();
  addRecord(db, r);
  if (db.records_size() == before)
    ++report.merged;
}

} // namespace

std::string compilerVersion() {
  return std::string("cuvil ") + CUVIL_VERSION + " kernels v" + std::to_string(CUVIL_KERNEL_PARAMS_VERSION);
}

std::string deviceKey(const std::string &triple, const std::string &cpu, const std::string &features) {
  char digest[17];
  std::snprintf(digest, sizeof digest, "%08x", unsigned(fnv1a(features) & 0xffffffffu));
  return triple + "/" + cpu + "/" + digest;
}

RecordKey keyOf(const TuningRecord &r) { return {r.signature(), r.device(), r.compiler_version()}; }

std::string LoadReport::summary() const {
  if (!skipped && !truncated)
    return "";
  std::string t;
  if (truncated)
    t = "the file ends inside a record (truncated: the records before it are used)";
  if (skipped)
    t += (t.empty() ? "" : "; ") + std::to_string(skipped) + " bad record(s) skipped";
  if (!reasons.empty()) {
    t += " (";
    for (size_t i = 0; i < reasons.size(); ++i)
      t += (i ? "; " : "") + reasons[i];
    t += skipped > int(reasons.size()) ? "; ...)" : ")";
  }
  return t;
}

Result<TuningDatabase> readTuningDatabase(const std::string &path, LoadReport *reportOut) {
  Result<std::string> bytes = readFile(path, uint64_t(1) << 30);
  if (!bytes)
    return bytes.error();
  LoadReport local;
  LoadReport &report = reportOut ? *reportOut : local;
  TuningDatabase db;
  if (isTextProtoPath(path)) {
    TuningDatabase text;
    google::protobuf::TextFormat::Parser parser;
    FirstError errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(*bytes, &text))
      return inputError("tuning database '" + path + "' is not a valid text TuningDatabase: " + errors.message);
    if (Status s = checkVersion(path, text); !s)
      return s.error();
    db.set_version(text.version());
    db.set_producer(text.producer());
    for (int i = 0; i < text.records_size(); ++i)
      addGood(db, text.records(i), i + 1, report);
    return db;
  }
  if (bytes->size() < kMagicSize || bytes->compare(0, kMagicSize, kMagic) != 0)
    return inputError("tuning database '" + path +
                      "' is not a tuning database (empty, or no CUVILTDB header; make it with "
                      "`cuvil-autotune tune`, text databases end in .textproto)");
  google::protobuf::io::ArrayInputStream input(bytes->data() + kMagicSize, int(bytes->size() - kMagicSize));
  google::protobuf::io::CodedInputStream coded(&input);
  bool clean = false;
  if (!google::protobuf::util::ParseDelimitedFromCodedStream(&db, &coded, &clean))
    return inputError("tuning database '" + path + "' has a damaged header (truncated or corrupt)");
  if (Status s = checkVersion(path, db); !s)
    return s.error();
  db.clear_records();
  for (int number = 1;; ++number) {
    // Each record is read from its own length prefix: a garbled one is
    // skipped whole, a cut one ends the file.
    uint32_t size = 0;
    if (!coded.ReadVarint32(&size))
      break;
    std::string body;
    if (!coded.ReadString(&body, int(size))) {
      report.truncated = true;
      break;
    }
    TuningRecord r;
    if (!r.ParseFromString(body)) {
      ++report.skipped;
      if (report.reasons.size() < 3)
        report.reasons.push_back("record " + std::to_string(number) + ": garbled");
      continue;
    }
    addGood(db, r, number, report);
  }
  return db;
}

Status writeTuningDatabase(const std::string &path, TuningDatabase db) {
  db.set_version(kTuningDatabaseVersion);
  std::vector<TuningRecord> records(db.records().begin(), db.records().end());
  std::sort(records.begin(), records.end(),
            [](const TuningRecord &a, const TuningRecord &b) { return keyOf(a) < keyOf(b); });
  db.clear_records();
  for (TuningRecord &r : records)
    *db.add_records() = std::move(r);
  std::string bytes;
  if (isTextProtoPath(path)) {
    bytes = "# cuvil tuning database (schema: tuning/TuningDatabase.proto)\n" + tuningDatabaseText(db);
  } else {
    bytes = kMagic;
    TuningDatabase header = db;
    header.clear_records();
    bool ok;
    {
      // (The stream trims the string to what was written when it goes.)
      google::protobuf::io::StringOutputStream out(&bytes);
      ok = google::protobuf::util::SerializeDelimitedToZeroCopyStream(header, &out);
      for (const TuningRecord &r : db.records())
        ok = ok && google::protobuf::util::SerializeDelimitedToZeroCopyStream(r, &out);
    }
    if (!ok)
      return ioError("cannot serialize the tuning database for '" + path + "'");
  }
  return writeFileAtomically(path, bytes);
}

std::string tuningDatabaseText(const TuningDatabase &db) {
  google::protobuf::TextFormat::Printer printer;
  std::string text;
  printer.PrintToString(db, &text);
  return text;
}

bool betterRecord(const TuningRecord &a, const TuningRecord &b) {
  bool am = a.method() == "measured", bm = b.method() == "measured";
  if (am != bm)
    return am;
  if (a.best_ms() != b.best_ms())
    return a.best_ms() < b.best_ms();
  if (a.trials() != b.trials())
    return a.trials() > b.trials();
  return std::tie(a.kernel(), a.variant()) < std::tie(b.kernel(), b.variant());
}

void addRecord(TuningDatabase &db, const TuningRecord &record) {
  for (TuningRecord &r : *db.mutable_records())
    if (keyOf(r) == keyOf(record)) {
      if (betterRecord(record, r))
        r = record;
      return;
    }
  *db.add_records() = record;
}

RecordIndex indexRecords(const TuningDatabase &db, const std::string &device, const std::string &version) {
  RecordIndex index;
  for (const TuningRecord &r : db.records()) {
    if (r.compiler_version() != version)
      index.otherVersion.push_back(&r);
    else if (r.device() != device)
      index.otherDevice.push_back(&r);
    else
      index.bySignature[r.signature()] = &r;
  }
  return index;
}

unsigned shardOf(const std::string &signature, unsigned count) {
  return count <= 1 ? 1 : unsigned(fnv1a(signature) % count) + 1;
}

Result<std::pair<unsigned, unsigned>> parseShard(const std::string &text) {
  auto bad = [&] {
    return usageError("--shard: '" + text + "' is not I/N with 1 <= I <= N (the I-th of N shards, e.g. 1/4)");
  };
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size())
    return bad();
  std::string a = text.substr(0, slash), b = text.substr(slash + 1);
  if (a.find_first_not_of("0123456789") != std::string::npos ||
      b.find_first_not_of("0123456789") != std::string::npos || a.size() > 6 || b.size() > 6)
    return bad();
  unsigned i = unsigned(std::stoul(a)), n = unsigned(std::stoul(b));
  if (i < 1 || n < 1 || i > n)
    return bad();
  return std::make_pair(i, n);
}

} // namespace cuvil::tuning
