//===- ToolSupport.cpp - Shared pieces of the command-line tools ----------===//
#include "support/Tool/ToolSupport.h"

#include "support/Tool/Version.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace cuvil {

std::string versionText() {
  return std::string("cuvil ") + CUVIL_VERSION + " (LLVM " +
         CUVIL_LLVM_VERSION + ")";
}

void addCommonOptions(CLI::App &app, LogOptions &log) {
  app.set_version_flag("--version", versionText());
  app.add_flag("-v,--verbose", log.verbosity,
               "More log output (-v info, -vv debug)");
  app.add_option("--log-level", log.level,
                 "Log level: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
}

void setupLogging(const std::string &tool, const LogOptions &log) {
  auto logger = spdlog::stderr_color_st(tool);
  logger->set_pattern("%n: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::level::level_enum level = spdlog::level::from_str(log.level);
  if (log.verbosity >= 2)
    level = std::min(level, spdlog::level::debug);
  else if (log.verbosity == 1)
    level = std::min(level, spdlog::level::info);
  spdlog::set_level(level);
}

int reportError(const std::string &tool, const Error &error) {
  // The importer's messages carry their own code (after the location).
  if (error.message.find("CUVIL-E-") != std::string::npos)
    std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), error.message.c_str());
  else
    std::fprintf(stderr, "%s: error: %s: %s\n", tool.c_str(), errorId(error).c_str(),
                 error.message.c_str());
  return error.code;
}

namespace {

CLI::Validator numberAtLeast(double least, bool strict, const char *name) {
  return CLI::Validator(
      [least, strict](std::string &text) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception &) {
          used = 0;
        }
        if (used != text.size() || text.empty() || !std::isfinite(v))
          return "expected a number, got '" + text + "'";
        if (strict ? !(v > least) : !(v >= least))
          return std::string("must be ") + (strict ? "> " : ">= ") + CLI::detail::to_string(least) +
                 ", got '" + text + "'";
        return "";
      },
      name);
}

} // namespace

CLI::Validator positiveNumber() { return numberAtLeast(0, true, "POSITIVE"); }
CLI::Validator nonNegativeNumber() { return numberAtLeast(0, false, "NONNEGATIVE"); }

int parseCommandLine(CLI::App &app, int argc, char **argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success &e) {
    return app.exit(e); // --help / --version
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return kExitUsageError;
  }
  return -1;
}

} // namespace cuvil
