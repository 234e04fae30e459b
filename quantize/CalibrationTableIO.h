//===- CalibrationTableIO.h - Reading and writing calibration tables -*- C++ -*-===//
//
// The calibration table (CalibrationTable.proto) in text format for
// .textproto/.pbtxt/.txtpb files and binary otherwise. A table that does not
// parse, has another version, or lacks what a reader needs is an error that
// names the file: a table is never half-trusted.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_CALIBRATIONTABLEIO_H
#define CUVIL_QUANTIZE_CALIBRATIONTABLEIO_H

#include "quantize/CalibrationTable.pb.h"
#include "support/Status.h"

#include <string>

namespace cuvil::quant {

constexpr uint32_t kCalibrationTableVersion = 1;

bool isTextProtoPath(const std::string &path);

Result<CalibrationTable> readCalibrationTable(const std::string &path);

/// The table's canonical bytes (deterministic binary serialization): what
/// its digest in a library's manifest is taken of, the same whichever format
/// or layout the file had.
std::string canonicalTableBytes(const CalibrationTable &table);

/// Written atomically (text or binary by the path's extension).
Status writeCalibrationTable(const std::string &path, const CalibrationTable &table);

} // namespace cuvil::quant

#endif // CUVIL_QUANTIZE_CALIBRATIONTABLEIO_H
