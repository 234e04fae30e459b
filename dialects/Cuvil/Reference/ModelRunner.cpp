//===- ModelRunner.cpp - Run a .mlir model on the reference evaluator -----===//
#include "dialects/Cuvil/Reference/ModelRunner.h"

#include "support/IrNesting.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/SourcePosition.h"
#include "dialects/Cuvil/Reference/Evaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using ::cuvil::Error;
using ::cuvil::Result;

namespace mlir::cuvil::reference {

struct ModelRunner::Impl {
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> diagnostics;
  OwningOpRef<ModuleOp> module;
  func::FuncOp entry;
  std::string path;
  std::map<std::string, int64_t> branchCounts; ///< over every run

  Impl() : context(MLIRContext::Threading::DISABLED) {}
};

ModelRunner::ModelRunner(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
ModelRunner::ModelRunner(ModelRunner &&) noexcept = default;
ModelRunner::~ModelRunner() = default;

Result<ModelRunner> ModelRunner::load(const std::string &path,
                                      const std::string &function) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  // The dialects a model file may hold (the same set as cuvil-opt's, kept
  // here so the evaluator does not depend on the pass libraries).
  DialectRegistry registry;
  registry.insert<CuvilDialect, arith::ArithDialect, func::FuncDialect,
                  scf::SCFDialect, tensor::TensorDialect>();
  impl->context.appendDialectRegistry(registry);
  impl->context.loadAllAvailableDialects();

  // Bytecode resources (weights) are 64-byte aligned; the reader needs the
  // buffer at least as aligned.
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/true,
                                            /*IsVolatile=*/true, llvm::Align(64)); // read, not mapped: a file truncated meanwhile is no SIGBUS
  if (std::error_code ec = buffer.getError())
    return ::cuvil::ioError("cannot read '" + path + "': " + ec.message());
  // Before the parser, which recurses once per nesting level.
  if (::cuvil::Status s = ::cuvil::checkIrNesting((*buffer)->getBuffer(), path); !s)
    return s.error();
  impl->sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  impl->diagnostics = std::make_unique<SourceMgrDiagnosticHandler>(
      impl->sourceMgr, &impl->context, llvm::errs());
  impl->module = parseSourceFile<ModuleOp>(impl->sourceMgr, &impl->context);
  if (!impl->module)
    return ::cuvil::inputError("'" + path + "' is not a valid Cuvil model "
                               "(see the diagnostics above)");

  SmallVector<func::FuncOp> candidates;
  for (auto f : impl->module->getOps<func::FuncOp>())
    if (!f.isExternal())
      candidates.push_back(f);
  if (!function.empty()) {
    for (func::FuncOp f : candidates)
      if (f.getSymName() == function)
        impl->entry = f;
    if (!impl->entry)
      return ::cuvil::inputError("'" + path + "' has no function named '" +
                                 function + "'");
  } else {
    SmallVector<func::FuncOp> publics;
    for (func::FuncOp f : candidates)
      if (f.isPublic())
        publics.push_back(f);
    if (publics.size() == 1)
      impl->entry = publics.front();
    for (func::FuncOp f : candidates)
      if (!impl->entry && f.getSymName() == "forward")
        impl->entry = f;
    if (!impl->entry) {
      std::string names;
      for (func::FuncOp f : candidates)
        names += (names.empty() ? "" : ", ") + f.getSymName().str();
      return ::cuvil::usageError(
          "'" + path + "' has " + std::to_string(candidates.size()) +
          " functions (" + names + "); choose one with --function");
    }
  }
  return ModelRunner(std::move(impl));
}

std::string ModelRunner::signature() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  FunctionType t = impl->entry.getFunctionType();
  os << impl->entry.getSymName() << "(";
  llvm::interleaveComma(t.getInputs(), os);
  os << ") -> (";
  llvm::interleaveComma(t.getResults(), os);
  os << ")";
  return os.str();
}

size_t ModelRunner::numInputs() const {
  return impl->entry.getFunctionType().getNumInputs();
}

std::map<std::string, int64_t> ModelRunner::branchCounts() const {
  std::map<std::string, int64_t> counts;
  impl->entry.walk([&](Operation *op) {
    if (llvm::isa<scf::IfOp>(op)) {
      for (const char *arm : {"if then", "if else"})
        if (std::string name = branchArmName(op, arm); !name.empty())
          counts[name] = 0;
    } else if (llvm::isa<scf::WhileOp>(op)) {
      if (std::string name = branchArmName(op, "loop body"); !name.empty())
        counts[name] = 0;
    }
  });
  for (const auto &[name, n] : impl->branchCounts)
    counts[name] += n;
  return counts;
}

Result<std::vector<::cuvil::Tensor>>
ModelRunner::run(const std::vector<::cuvil::Tensor> &inputs) const {
  // Complex inputs and outputs are (real, imaginary) pairs inside.
  std::vector<::cuvil::Tensor> args = inputs;
  for (size_t i = 0; i < args.size() && i < impl->entry.getNumArguments(); ++i)
    if (impl->entry.getArgAttr(i, kComplexAttrName)) {
      Result<::cuvil::Tensor> pairs = args[i].complexAsPairs();
      if (!pairs)
        return ::cuvil::inputError("input " + std::to_string(i) + " of '" +
                                   impl->entry.getSymName().str() + "' is complex: " +
                                   pairs.error().message);
      args[i] = std::move(*pairs);
    }
  EvaluateOptions options;
  options.branchCounts = &impl->branchCounts;
  FailureOr<SmallVector<Tensor>> results = evaluateFunction(impl->entry, args, options);
  if (failed(results))
    return ::cuvil::inputError("evaluation of '" +
                               impl->entry.getSymName().str() + "' in '" +
                               impl->path + "' failed (see above)");
  std::vector<::cuvil::Tensor> outputs(results->begin(), results->end());
  for (size_t i = 0; i < outputs.size(); ++i)
    if (impl->entry.getResultAttr(i, kComplexAttrName)) {
      Result<::cuvil::Tensor> complex = outputs[i].pairsAsComplex();
      if (!complex)
        return complex.error();
      outputs[i] = std::move(*complex);
    }
  return outputs;
}

} // namespace mlir::cuvil::reference
