//===- TuningDatabase.h - The tuning database: read, write, merge -*- C++ -*-===//
//
// Records of measured kernel configurations (TuningDatabase.proto), keyed by
// kernel signature, device and compiler version. A record for another
// device or compiler version is never used: lookups skip it and say so.
// Written atomically; a corrupt or truncated file is a clear error.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TUNING_TUNINGDATABASE_H
#define CUVIL_TUNING_TUNINGDATABASE_H

#include "support/Status.h"
#include "tuning/TuningDatabase.pb.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace cuvil::tuning {

inline constexpr uint32_t kTuningDatabaseVersion = 1;

/// What records are valid for: this compiler's kernels.
std::string compilerVersion();

/// The device part of a key: target triple, CPU and a digest of the feature
/// string ("x86_64-unknown-linux-gnu/znver4/f3a2c1d0").
std::string deviceKey(const std::string &triple, const std::string &cpu, const std::string &features);

/// A record's key: signature, device, compiler version.
using RecordKey = std::tuple<std::string, std::string, std::string>;
RecordKey keyOf(const TuningRecord &record);

/// What reading a database left out: bad records are skipped and counted,
/// never the reason a load fails (a truncated last record, a garbled one, a
/// record without its key or with an impossible time); records with one key
/// are merged (the better kept).
struct LoadReport {
  int skipped = 0, merged = 0;
  bool truncated = false;
  std::vector<std::string> reasons; ///< the first few, for the warning
  /// "3 record(s) skipped (record 7: ...; ...)", or "" when none was.
  std::string summary() const;
};

/// The binary format: "CUVILTDB", then length-delimited Protobuf messages:
/// a TuningDatabase header (version, producer; no records), then one
/// TuningRecord each, so that a damaged record loses only itself. Text
/// (.textproto/.pbtxt/.txtpb) is one TuningDatabase message.
Result<TuningDatabase> readTuningDatabase(const std::string &path, LoadReport *report = nullptr);
/// Binary unless `path` ends in .textproto/.pbtxt; records sorted by key,
/// so that the same records give the same bytes.
Status writeTuningDatabase(const std::string &path, TuningDatabase db);
/// The database as text (cuvil-autotune show).
std::string tuningDatabaseText(const TuningDatabase &db);

/// Whether `a` is a better record than `b` for the same key: a measured
/// record beats a cost-model one, then the lower time wins (ties: more
/// trials, then the smaller configuration name, so merge is deterministic).
bool betterRecord(const TuningRecord &a, const TuningRecord &b);
/// Adds `record` to `db`, keeping the better of two with one key.
void addRecord(TuningDatabase &db, const TuningRecord &record);

/// The records of one device and compiler version, by signature, with the
/// others counted (for the warning that names them).
struct RecordIndex {
  std::map<std::string, const TuningRecord *> bySignature;
  std::vector<const TuningRecord *> otherDevice, otherVersion;
};
RecordIndex indexRecords(const TuningDatabase &db, const std::string &device,
                         const std::string &version = compilerVersion());

/// The shard (1-based, of `count`) a signature belongs to: by its digest,
/// so that it does not depend on the model around it.
unsigned shardOf(const std::string &signature, unsigned count);
/// "I/N" with 1 <= I <= N, or a usage error.
Result<std::pair<unsigned, unsigned>> parseShard(const std::string &text);

} // namespace cuvil::tuning

#endif // CUVIL_TUNING_TUNINGDATABASE_H
