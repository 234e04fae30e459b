//===- LibraryRunner.h - Run a compiled libinference.so ---------*- C++ -*-===//
//
// Loads a library made by cuvil-export (dlopen) and runs it through its C
// API, exactly as an application would. No LLVM: this also builds for
// aarch64, where cuvil-run runs aarch64 libraries under qemu.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CUVIL_RUN_LIBRARYRUNNER_H
#define CUVIL_CUVIL_RUN_LIBRARYRUNNER_H

#include "cuvil-run/RunLoop.h"
#include "support/Npy.h"
#include "support/Status.h"
#include "support/Tensor.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

class LibraryRunner {
public:
  /// Loads `path` and creates one model instance with `threads` threads
  /// (0 = all cores); `prefix`: the C API's names (cuvil-export
  /// --symbol-prefix), "cuvil" by default; `device`: where a library with
  /// GPU code runs, "auto", "cpu" or "cuda" (cuvil_options.device).
  static Result<LibraryRunner> load(const std::string &path, int threads,
                                    const std::string &prefix = "cuvil",
                                    const std::string &device = "auto");
  LibraryRunner(LibraryRunner &&) noexcept;
  LibraryRunner &operator=(LibraryRunner &&) noexcept;
  ~LibraryRunner();

  size_t numInputs() const;
  /// What input `i` must be ("input 0 (x) of 'lib.so'", its dtype and
  /// shape), for checking a file's header before its data is read.
  NpyExpectation inputExpectation(size_t i) const;
  /// The library's file (messages of run() start with it).
  const std::string &path() const;
  /// Where the instance runs (cuvil_model_device): "cpu", "cpu (fallback:
  /// REASON)" or "cuda:NAME (sm_XY, ...)".
  std::string device() const;
  /// "x: 1x3x224x224xf32 -> output0: 1x1000xf32".
  std::string signature() const;
  /// Runs once into `outputs`; the library checks the inputs (shapes,
  /// dtypes). Tensors already in `outputs` with the right dtype and shape
  /// (the previous run's) are written over, not allocated again.
  Status run(const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs);
  /// The instance's per-site times so far (empty unless the library was
  /// compiled with --instrument), and their reset.
  std::vector<ProfileRow> profile() const;
  void resetProfile();
  /// How often each arm of the model's control flow ran, by name ("m.py:12
  /// if then"), over the instance's runs; nullopt for a library from before
  /// the branch counters.
  std::optional<std::map<std::string, int64_t>> branchCounts() const;
  /// NPU libraries (--target npu): keep the simulator's account of each
  /// run (false: the library has no NPU recording, e.g. an older build),
  /// and the last run's, as JSON ("" before any recorded run).
  bool recordNpu();
  std::string npuReport() const;

private:
  struct Impl;
  explicit LibraryRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace cuvil

#endif // CUVIL_CUVIL_RUN_LIBRARYRUNNER_H
