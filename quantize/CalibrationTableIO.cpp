//===- CalibrationTableIO.cpp - Reading and writing calibration tables ----===//
#include "quantize/CalibrationTableIO.h"

#include "support/AtomicFile.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <set>

namespace cuvil::quant {
namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Collects the text parser's first error instead of letting protobuf log it.
struct FirstError : google::protobuf::io::ErrorCollector {
  std::string message;
  void AddError(int line, int column, const std::string &msg) override {
    if (message.empty())
      message = "line " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + msg;
  }
};

Status checkTable(const std::string &path, const CalibrationTable &t) {
  auto bad = [&](const std::string &what) {
    return inputError("calibration table '" + path + "': " + what);
  };
  if (t.version() != kCalibrationTableVersion)
    return bad("version " + std::to_string(t.version()) + " is not supported (this cuvil-quantize "
               "reads version " + std::to_string(kCalibrationTableVersion) + ")");
  if (t.graph_hash().empty())
    return bad("it has no graph_hash");
  std::set<std::string> names;
  for (const TensorCalibration &c : t.tensors()) {
    if (c.name().empty())
      return bad("a tensor entry has no name");
    if (!names.insert(c.name()).second)
      return bad("tensor '" + c.name() + "' appears twice");
    if (!(c.scale() > 0) || !std::isfinite(c.scale()))
      return bad("tensor '" + c.name() + "' has scale " + std::to_string(c.scale()) +
                 " (must be positive and finite)");
    if (c.zero_point() < 0 || c.zero_point() > 255)
      return bad("tensor '" + c.name() + "' has zero point " + std::to_string(c.zero_point()) +
                 " outside [0, 255]");
  }
  return Status();
}

} // namespace

bool isTextProtoPath(const std::string &path) {
  return endsWith(path, ".textproto") || endsWith(path, ".pbtxt") || endsWith(path, ".txtpb");
}

Result<CalibrationTable> readCalibrationTable(const std::string &path) {
  Result<std::string> bytes = readFile(path, uint64_t(1) << 30);
  if (!bytes)
    return bytes.error();
  CalibrationTable table;
  if (isTextProtoPath(path)) {
    google::protobuf::TextFormat::Parser parser;
    FirstError errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(*bytes, &table))
      return inputError("calibration table '" + path + "' is not a valid text CalibrationTable: " +
                        errors.message);
  } else if (!table.ParseFromString(*bytes)) {
    return inputError("calibration table '" + path + "' is not a valid binary CalibrationTable "
                      "(corrupt or another format; text tables end in .textproto)");
  }
  if (Status s = checkTable(path, table); !s)
    return s.error();
  return table;
}

std::string canonicalTableBytes(const CalibrationTable &table) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream); // trims `bytes` when it goes
    coded.SetSerializationDeterministic(true);
    table.SerializeToCodedStream(&coded);
  }
  return bytes;
}

Status writeCalibrationTable(const std::string &path, const CalibrationTable &table) {
  std::string bytes;
  if (isTextProtoPath(path)) {
    google::protobuf::TextFormat::Printer printer;
    if (!printer.PrintToString(table, &bytes))
      return ioError("cannot print the calibration table for '" + path + "'");
    bytes = "# cuvil-quantize calibration table (schema: quantize/CalibrationTable.proto)\n" + bytes;
  } else if (!table.SerializeToString(&bytes)) {
    return ioError("cannot serialize the calibration table for '" + path + "'");
  }
  return writeFileAtomically(path, bytes);
}

} // namespace cuvil::quant
