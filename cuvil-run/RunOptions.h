//===- RunOptions.h - cuvil-run's command line, shared ----------*- C++ -*-===//
//
// The options both builds of cuvil-run take (the host tool and the aarch64
// one run under qemu), declared once with CLI11 (header-only, so the cross
// build has it too): the same flags, the same help, the same checks.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CUVIL_RUN_RUNOPTIONS_H
#define CUVIL_CUVIL_RUN_RUNOPTIONS_H

#include "cuvil-run/RunLoop.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  RunSettings settings;
  int threads = 0;
  uint64_t seed = 0;
  std::string symbolPrefix = "cuvil";
  bool profile = false;
  std::string device = "auto"; // cuvil_options.device: auto, cpu or cuda
};

/// The shared options on `app`; `model` says what the positional takes.
inline void addRunOptions(CLI::App &app, RunOptions &o, const std::string &model) {
  app.add_option("model", o.model, model)->required();
  app.add_option("-i,--input", o.inputs,
                 "Input tensor (.npy), one per model input, in order; an .npz gives several "
                 "(input0, input1, ... or arr_0, ..., in that order); or generated: "
                 "[INDEX=]DIMxDIM...xDTYPE:random (uniform in [-1, 1) for floats, 0..9 for "
                 "integers), e.g. 0=1x3x224x224xf32:random");
  app.add_option("--seed", o.seed, "Seed of the generated inputs (input i uses seed + i; default 0)");
  app.add_option("-o,--output-dir", o.settings.outputDir,
                 "Directory for output0.npy, output1.npy, ... (created if missing; default: "
                 "current directory)");
  app.add_option("--benchmark", o.settings.benchmark,
                 "Time N runs (after the warm-up) and print min, median, p90, p99, mean and "
                 "stdev of the latency")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--warmup", o.settings.warmup,
                 "Untimed runs before the timed ones (default: 1 when timing, so the first "
                 "run's page faults and cold caches stay out of the statistics)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--duration", o.settings.duration,
                 "Keep timing until this many seconds have passed (and --benchmark runs are done)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--expected-output", o.settings.expected,
                 "Expected output (.npy), one per model output, in order: exit 1 when an element "
                 "differs by more than --atol + --rtol x |expected| (NaN matches NaN), the worst "
                 "element named");
  app.add_option("--rtol", o.settings.rtol, "Relative tolerance of --expected-output (default 1e-5)")
      ->check(CLI::Range(0.0, 1e300));
  app.add_option("--atol", o.settings.atol, "Absolute tolerance of --expected-output (default 1e-6)")
      ->check(CLI::Range(0.0, 1e300));
  app.add_option("--symbol-prefix", o.symbolPrefix,
                 "The library's C API prefix, for one exported with cuvil-export --symbol-prefix "
                 "(default: cuvil)");
  // The C API's limit (cuvil_options.num_threads, 1..1024).
  app.add_option("--threads", o.threads, "Threads to use, 1 to 1024 (default 0: all cores)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--device", o.device,
                 "Where a library with GPU code (cuvil-export --target cuda or x86_64,cuda) runs: "
                 "auto (default: the GPU when a CUDA driver and a device that runs its code "
                 "exist, else its CPU code if it has some), cpu (its CPU code), cuda (the GPU or "
                 "an error, never the CPU). Libraries without GPU code run on the CPU; the "
                 "device chosen is logged")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_flag("-q,--quiet", o.settings.quiet, "Do not print the outputs");
  app.add_flag("--profile", o.profile,
               "Print the time of every layer over the timed runs (a library compiled with "
               "cuvil-export --instrument), slowest first");
}

} // namespace cuvil

#endif // CUVIL_CUVIL_RUN_RUNOPTIONS_H
