//===- ToolSupport.h - Shared pieces of the command-line tools -*- C++ -*-===//
//
// Every non-opt tool parses its command line with CLI11 and logs through
// spdlog. This header gives them the same -v/--log-level/--version options,
// the same "tool: error: ..." format and the exit codes of ARCHITECTURE.md §3.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_TOOL_TOOLSUPPORT_H
#define CUVIL_SUPPORT_TOOL_TOOLSUPPORT_H

#include "support/Status.h"

#include <CLI/CLI.hpp>
#include <string>

namespace cuvil {

/// Logging options every tool accepts.
struct LogOptions {
  int verbosity = 0;          ///< -v (repeatable)
  std::string level = "warn"; ///< --log-level
};

/// Adds --version, -v and --log-level to `app`.
void addCommonOptions(CLI::App &app, LogOptions &log);

/// Configures spdlog (stderr, "tool: level: message") from the options.
void setupLogging(const std::string &tool, const LogOptions &log);

/// "cuvil 0.1.0 (LLVM 19.1.7)".
std::string versionText();

/// Prints "tool: error: message" to stderr and returns the error's exit code.
int reportError(const std::string &tool, const Error &error);

/// Runs CLI11 parsing; on --help/--version prints and returns 0, on a usage
/// error prints it and returns kExitUsageError. Returns -1 to go on.
int parseCommandLine(CLI::App &app, int argc, char **argv);

/// Option checks with readable messages ("must be > 0, got '-1'"; CLI11's
/// own PositiveNumber prints the whole range up to DBL_MAX in digits).
CLI::Validator positiveNumber();
CLI::Validator nonNegativeNumber();

} // namespace cuvil

#endif // CUVIL_SUPPORT_TOOL_TOOLSUPPORT_H
