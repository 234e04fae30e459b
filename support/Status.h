//===- Status.h - Error values for the LLVM-free support code -*- C++ -*-===//
//
// The support library is used by the runtime-side tools too, so it cannot use
// llvm::Error. `Result<T>` carries either a value or a message plus the exit
// code class of ARCHITECTURE.md section 3 (1 input, 2 usage, 3 I/O).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_STATUS_H
#define CUVIL_SUPPORT_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace cuvil {

/// Process exit codes shared by every Cuvil tool.
enum ExitCode : int {
  kExitSuccess = 0,
  kExitInputError = 1, ///< input could not be compiled/run (malformed, unsupported)
  kExitUsageError = 2, ///< bad command line
  kExitIOError = 3,    ///< a file could not be read or written
};

/// An error message with the exit code it should map to.
/// `id` is the stable error code tools print before the message
/// (CUVIL-E-LIB-TRUNCATED, ...); without one the exit class names it
/// (CUVIL-E-INPUT, CUVIL-E-USAGE, CUVIL-E-IO).
struct Error {
  std::string message;
  ExitCode code = kExitInputError;
  std::string id = {};
};

/// Success or an Error.
class Status {
public:
  Status() = default;
  Status(Error e) : error_(std::move(e)) {}
  static Status ok() { return Status(); }
  explicit operator bool() const { return !error_.has_value(); }
  bool isOk() const { return !error_.has_value(); }
  const Error &error() const { return *error_; }

private:
  std::optional<Error> error_;
};

/// A value or an Error.
template <typename T> class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error e) : error_(std::move(e)) {}
  explicit operator bool() const { return value_.has_value(); }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  const Error &error() const { return *error_; }
  Status status() const { return value_ ? Status() : Status(*error_); }

private:
  std::optional<T> value_;
  std::optional<Error> error_;
};

inline Error inputError(std::string msg) { return {std::move(msg), kExitInputError}; }
inline Error ioError(std::string msg) { return {std::move(msg), kExitIOError}; }
inline Error usageError(std::string msg) { return {std::move(msg), kExitUsageError}; }
/// `e` with the stable code `id`.
inline Error withId(Error e, std::string id) {
  e.id = std::move(id);
  return e;
}

/// The code a tool prints for `e`: its id, else its exit class's.
inline std::string errorId(const Error &e) {
  if (!e.id.empty())
    return e.id;
  switch (e.code) {
  case kExitUsageError: return "CUVIL-E-USAGE";
  case kExitIOError: return "CUVIL-E-IO";
  default: return "CUVIL-E-INPUT";
  }
}

} // namespace cuvil

#endif // CUVIL_SUPPORT_STATUS_H
