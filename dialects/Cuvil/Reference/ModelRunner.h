//===- ModelRunner.h - Run a .mlir model on the reference evaluator -*- C++ -*-===//
//
// What `cuvil-run model.mlir` does, as a library: parse a model file
// (text or bytecode), pick its entry function, check inputs against the
// signature and evaluate it. Diagnostics from parsing and evaluation go to
// stderr as "file:line:col: error: ...".
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_REFERENCE_MODELRUNNER_H
#define CUVIL_DIALECT_CUVIL_REFERENCE_MODELRUNNER_H

#include "support/Status.h"
#include "support/Tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::cuvil::reference {

class ModelRunner {
public:
  ~ModelRunner();
  ModelRunner(ModelRunner &&) noexcept;

  /// Parses `path`. `function` picks the entry point; when empty, the only
  /// public function, else one named "forward".
  static ::cuvil::Result<ModelRunner> load(const std::string &path,
                                           const std::string &function = "");

  /// "forward(tensor<1x3xf32>) -> (tensor<1x2xf32>)".
  std::string signature() const;
  /// Number of inputs the entry function takes.
  size_t numInputs() const;

  /// Evaluates the entry function.
  ::cuvil::Result<std::vector<::cuvil::Tensor>>
  run(const std::vector<::cuvil::Tensor> &inputs) const;

  /// Every arm of the model's control flow in the entry function (by
  /// branchArmName) and how often the runs so far took it (0 for arms never
  /// taken).
  std::map<std::string, int64_t> branchCounts() const;

private:
  struct Impl;
  explicit ModelRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::cuvil::reference

#endif // CUVIL_DIALECT_CUVIL_REFERENCE_MODELRUNNER_H
