//===- CrashRecovery.h - Internal failures as a report and exit 1 -*- C++ -*-===//
//
// A compiler must never die of a signal in front of its user. The tools
// install these handlers first thing: an LLVM fatal error or a crash signal
// (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP) prints
//
//   cuvil-export: internal error: <what happened>
//   note: while running pass 'cuvil-to-linalg' on 'builtin.module'
//   note: while applying 'MaxLowering' to 'cuvil.reduce.max' at model.py:12
//
// removes the temporary files registered with llvm::sys::RemoveFileOnSignal
// (outputs are published by rename, so the output path is untouched) and
// exits with status 1. What the process was doing comes from a stack of
// frames: MLIR passes and rewrite patterns push theirs through the context's
// action handler (trackCrashContext), the importer pushes one per operator
// (CrashFrame).
//
// With --crash-reproducer DIR the pass managers run every pass under LLVM's
// crash recovery: a crash inside a pass becomes a failure of that pass, and
// DIR/reproducer.mlir holds the IR the failing pass was given and the
// pipeline to rerun it (`cuvil-opt DIR/reproducer.mlir --run-reproducer`).
//
// This library needs LLVM's Support and MLIR's IR and Pass libraries only,
// so the importer, the passes and the targets can all push frames.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_CRASH_CRASHRECOVERY_H
#define CUVIL_SUPPORT_CRASH_CRASHRECOVERY_H

#include "mlir/IR/Location.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir {
class MLIRContext;
class PassManager;
} // namespace mlir

namespace cuvil {

/// Installs the process-wide handlers. `tool` names the tool in the report;
/// `reproducerDir` (may be empty) is where a stack trace goes as well.
void installCrashHandlers(const char *tool, std::string reproducerDir = "");

/// Only the resource part of installCrashHandlers: running out of memory
/// (operator new, LLVM's allocators, threads) and uncaught exceptions become
/// "error: CUVIL-E-OOM: out of memory (...)" and exit 1, temporaries removed.
/// For tools that run code they did not compile (cuvil-run), whose crashes
/// are not the compiler's.
void installResourceHandlers(const char *tool);

/// Makes the passes and rewrite patterns that run in `context` push frames
/// (the pass or pattern, the op's name and source location). Only for
/// contexts with multithreading disabled (the frames are one stack).
void trackCrashContext(mlir::MLIRContext &context);

/// What runPassManager saw.
struct PipelineRun {
  bool failed = false;  ///< a pass failed (or crashed)
  bool crashed = false; ///< a pass crashed and was recovered (--crash-reproducer)
  std::string reproducer; ///< DIR/reproducer.mlir when one was written
};

/// Runs `pm` on `op`. With --crash-reproducer (a directory given to
/// installCrashHandlers) each pass runs under crash recovery: a crash fails
/// the run, is reported with the frames it left, and DIR/reproducer.mlir
/// holds the failing pass's input IR (a failing pass leaves one too).
/// Needs trackCrashContext on the context to tell crashes from failures.
PipelineRun runPassManager(mlir::PassManager &pm, mlir::Operation *op);

/// One frame of what the process is doing, for as long as it lives:
/// `describe(cookie, os)` is called only if the process crashes meanwhile.
class CrashFrame {
public:
  using Describe = void (*)(const void *cookie, llvm::raw_ostream &os);
  CrashFrame(Describe describe, const void *cookie);
  /// A frame with fixed text (`what` must outlive the frame).
  explicit CrashFrame(llvm::StringRef what);
  ~CrashFrame();
  CrashFrame(const CrashFrame &) = delete;
  CrashFrame &operator=(const CrashFrame &) = delete;

private:
  size_t depth_;
};

/// Where a test may inject a crash (CUVIL_TEST_CRASH=KIND:NAME:segv|trap|fatal);
/// each pass ("pass:ARGUMENT") and each op a rewrite pattern is applied to
/// ("pattern:OPNAME") is one once trackCrashContext is on.
void crashPoint(llvm::StringRef kind, llvm::StringRef name);

/// "file:line" of the innermost file location in `loc` (call sites, fused
/// and named locations looked through), or "" when it has none.
std::string sourceLine(mlir::Location loc);

} // namespace cuvil

#endif // CUVIL_SUPPORT_CRASH_CRASHRECOVERY_H
