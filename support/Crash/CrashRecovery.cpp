//===- CrashRecovery.cpp - Internal failures as a report and exit 1 -------===//
#include "support/Crash/CrashRecovery.h"

#include "support/Staging.h"

#include "mlir/IR/Action.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

#include <csignal>
#include <exception>
#include <new>
#include <system_error>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace cuvil {
namespace {

/// One entry of the frame stack. Everything is captured by value when the
/// frame is pushed (names and locations are owned by the context), so a
/// frame stays printable after its op was erased.
struct Frame {
  enum class Kind { Text, Callback, Pass, Pattern } kind = Kind::Text;
  llvm::StringRef text;              ///< Text; pass name
  const mlir::tracing::Action *action = nullptr; ///< Pattern (alive while on the stack)
  CrashFrame::Describe describe = nullptr;
  const void *cookie = nullptr;
  const void *opName = nullptr;      ///< OperationName, opaque
  const void *location = nullptr;    ///< Location, opaque
};

// One stack for the process, not per thread: crash recovery runs the passes
// on a thread of its own while the caller waits, and the frames it leaves
// behind are how a recovered crash is told from a failure. The tools run
// MLIR single-threaded; trackCrashContext refuses threaded contexts.
constexpr size_t kMaxFrames = 512;
Frame frames[kMaxFrames];
size_t frameCount = 0;

const char *toolName = "cuvil";
std::string reproducerDirectory;

size_t push(const Frame &f) {
  size_t depth = frameCount;
  if (frameCount < kMaxFrames)
    frames[frameCount] = f;
  ++frameCount;
  return depth;
}

void popTo(size_t depth) { frameCount = depth; }

void printOp(llvm::raw_ostream &os, const Frame &f) {
  if (!f.opName)
    return;
  os << " '" << mlir::OperationName::getFromOpaquePointer(f.opName).getStringRef() << "'";
  if (f.location) {
    std::string line =
        sourceLine(mlir::Location(llvm::cast<mlir::LocationAttr>(mlir::Attribute::getFromOpaquePointer(f.location))));
    if (!line.empty())
      os << " at " << line;
  }
}

/// Prints frames [from, frameCount), innermost first (the pattern, then its
/// pass, then the import step). `stale`: the frames were left behind by a
/// crash that crash recovery unwound past, so what they point to outside
/// the context (actions, cookies) is gone.
void printFrames(llvm::raw_ostream &os, size_t from = 0, bool stale = false) {
  size_t n = std::min(frameCount, kMaxFrames);
  for (size_t i = n; i-- > from;) {
    const Frame &f = frames[i];
    os << "note: while ";
    switch (f.kind) {
    case Frame::Kind::Text: os << f.text; break;
    case Frame::Kind::Callback:
      if (stale)
        os << "(a step that has ended)";
      else
        f.describe(f.cookie, os);
      break;
    case Frame::Kind::Pass:
      os << "running pass '" << f.text << "' on";
      printOp(os, f);
      break;
    case Frame::Kind::Pattern: {
      if (stale) {
        os << "applying a rewrite pattern to";
        printOp(os, f);
        break;
      }
      // "`apply-pattern pattern: NAME": the pattern is private to the action.
      llvm::SmallString<128> text;
      llvm::raw_svector_ostream ts(text);
      f.action->print(ts);
      llvm::StringRef name = llvm::StringRef(text).rsplit("pattern: ").second;
      for (llvm::StringRef noise : {"mlir::", "cuvil::", "lowering::", "(anonymous namespace)::"})
        while (name.contains(noise)) {
          auto [head, tail] = name.split(noise);
          text = (head + tail).str();
          name = text;
        }
      os << "applying pattern '" << (name.empty() ? "?" : name) << "' to";
      printOp(os, f);
      break;
    }
    }
    os << "\n";
  }
  if (frameCount > kMaxFrames)
    os << "note: (" << frameCount - kMaxFrames << " deeper frames not recorded)\n";
}

/// The report, then exit 1. Called from a signal handler or the fatal-error
/// handler: the process state is suspect, so print and leave (best effort).
[[noreturn]] void reportAndExit(llvm::StringRef what) {
  llvm::raw_fd_ostream &os = llvm::errs();
  os << toolName << ": internal error: " << what << " (a bug in Cuvil, not in the model)\n";
  printFrames(os);
  if (!reproducerDirectory.empty()) {
    std::string stack = reproducerDirectory + "/stack.txt";
    std::error_code ec;
    llvm::raw_fd_ostream file(stack, ec);
    if (!ec) {
      llvm::sys::PrintStackTrace(file);
      printFrames(file);
      os << "note: the stack trace is in '" << stack << "'\n";
    }
  } else {
    os << "note: rerun with --crash-reproducer DIR to save the IR at the failing pass and the "
          "stack trace for a bug report\n";
  }
  os << toolName << ": no output was written\n";
  os.flush();
  ::cuvil::removeStagingDirectories();
  ::_exit(1);
}

/// Freed when memory runs out, so that the report can be printed.
char *emergencyReserve = nullptr;

/// Out of memory (operator new, LLVM's allocators, a thread that cannot
/// get its stack): a resource, not a bug. The message names the phase (the
/// crash frames), the temporaries go, exit 1.
[[noreturn]] void outOfMemory(const char *what) {
  delete[] emergencyReserve;
  emergencyReserve = nullptr;
  llvm::sys::RunInterruptHandlers(); // removes the registered temporary files
  ::cuvil::removeStagingDirectories();
  llvm::raw_fd_ostream &os = llvm::errs();
  os << toolName << ": error: CUVIL-E-OOM: out of memory (" << what
     << "): free memory, raise the limit (ulimit -v, the container's) or compile a smaller model\n";
  printFrames(os);
  os << toolName << ": no output was written\n";
  os.flush();
  ::_exit(1);
}

void onBadAlloc(void *, const char *reason, bool) { outOfMemory(reason ? reason : "an allocation failed"); }

void onNewFailure() { outOfMemory("an allocation failed"); }

/// An exception nothing caught (the code is built without exceptions, the
/// standard library throws): out of memory and system errors said as such.
void onTerminate() {
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc &) {
      outOfMemory("an allocation failed");
    } catch (const std::system_error &x) {
      if (x.code() == std::errc::resource_unavailable_try_again || x.code() == std::errc::not_enough_memory)
        outOfMemory(x.what());
      reportAndExit(std::string("unexpected system error: ") + x.what());
    } catch (const std::exception &x) {
      reportAndExit(std::string("unexpected exception: ") + x.what());
    } catch (...) {
    }
  }
  reportAndExit("the compiler terminated (an unexpected exception)");
}

void onSignal(void *) {
  // LLVM has removed the files registered with RemoveFileOnSignal. The
  // signal number is not passed to handlers; the common causes are named.
  reportAndExit("the compiler crashed (segmentation fault, illegal instruction, trap or abort)");
}

void onFatalError(void *, const char *reason, bool) {
  if (llvm::CrashRecoveryContext::GetCurrent()) {
    // Inside a pass run under --crash-reproducer: the recovery context
    // catches the abort that follows and the pass fails with a reproducer.
    llvm::errs() << toolName << ": internal error: " << reason << "\n";
    return;
  }
  llvm::sys::RunInterruptHandlers(); // removes the registered temporary files
  // LLVM's streams end a failed write (a full disk) with a fatal error:
  // an I/O error, not a bug.
  if (llvm::StringRef(reason).starts_with("IO failure on output stream")) {
    ::cuvil::removeStagingDirectories();
    llvm::errs() << toolName << ": error: CUVIL-E-IO: cannot write an output: " << reason << "\n";
    printFrames(llvm::errs());
    llvm::errs() << toolName << ": no output was written\n";
    llvm::errs().flush();
    ::_exit(3);
  }
  // LLVM's thread pool cannot start a thread (EAGAIN under ulimit -v or a
  // process limit): a resource, not a bug.
  if (llvm::StringRef(reason).starts_with("pthread_create failed"))
    outOfMemory(reason);
  reportAndExit(reason);
}

/// CUVIL_TEST_CRASH=KIND:NAME:HOW makes the tool fail where KIND:NAME is
/// reached ("pass:convert-cuvil-to-linalg", "import:aten::relu", or
/// "pattern:cuvil.act.relu": a rewrite pattern applied to such an op) in the way
/// HOW says (segv, trap, fatal): the tests of the handlers crash the tools
/// for real without a compiler bug to rely on.
void maybeInjectCrash(llvm::StringRef kind, llvm::StringRef name) {
  static const char *spec = std::getenv("CUVIL_TEST_CRASH");
  if (!spec)
    return;
  llvm::StringRef rest = spec;
  if (!rest.consume_front(kind) || !rest.consume_front(":") || !rest.consume_front(name) ||
      !rest.consume_front(":"))
    return;
  if (rest == "fatal")
    llvm::report_fatal_error("injected fatal error (CUVIL_TEST_CRASH)");
  if (rest == "trap")
    __builtin_trap();
  if (rest == "stack") { // unbounded recursion: a stack overflow
    struct Recurse {
      static int deeper(volatile int depth) {
        volatile char frame[1024];
        frame[0] = char(depth);
        return deeper(depth + 1) + frame[0];
      }
    };
    (void)Recurse::deeper(0);
  }
  volatile int *null = nullptr;
  *null = 1; // segv
}

} // namespace

void installResourceHandlers(const char *tool) {
  toolName = tool;
  llvm::install_bad_alloc_error_handler(onBadAlloc, nullptr);
  if (!emergencyReserve)
    emergencyReserve = new char[1 << 20];
  std::set_new_handler(onNewFailure);
  std::set_terminate(onTerminate);
}

void installCrashHandlers(const char *tool, std::string reproducerDir) {
  toolName = tool;
  reproducerDirectory = std::move(reproducerDir);
  llvm::install_fatal_error_handler(onFatalError, nullptr);
  installResourceHandlers(tool);
  llvm::sys::AddSignalHandler(onSignal, nullptr);
}

void trackCrashContext(mlir::MLIRContext &context) {
  if (context.isMultithreadingEnabled())
    return; // one frame stack for the process: see `frames`
  context.registerActionHandler([](llvm::function_ref<void()> transform,
                                   const mlir::tracing::Action &action) {
    Frame f;
    if (auto *pass = llvm::dyn_cast<mlir::PassExecutionAction>(&action)) {
      f.kind = Frame::Kind::Pass;
      f.text = pass->getPass().getArgument().empty() ? pass->getPass().getName()
                                                     : pass->getPass().getArgument();
    } else if (llvm::isa<mlir::ApplyPatternAction>(&action)) {
      f.kind = Frame::Kind::Pattern;
      f.action = &action;
    } else {
      f.kind = Frame::Kind::Text;
      f.text = action.getTag();
    }
    for (const mlir::IRUnit &unit : action.getContextIRUnits())
      if (auto *op = llvm::dyn_cast_if_present<mlir::Operation *>(unit)) {
        f.opName = op->getName().getAsOpaquePointer();
        f.location = op->getLoc().getAsOpaquePointer();
        break;
      }
    size_t depth = push(f);
    if (f.kind == Frame::Kind::Pass)
      maybeInjectCrash("pass", f.text);
    else if (f.kind == Frame::Kind::Pattern && f.opName)
      maybeInjectCrash("pattern", mlir::OperationName::getFromOpaquePointer(f.opName).getStringRef());
    transform();
    popTo(depth);
  });
}

PipelineRun runPassManager(mlir::PassManager &pm, mlir::Operation *op) {
  PipelineRun run;
  if (!reproducerDirectory.empty()) {
    llvm::sys::fs::create_directories(reproducerDirectory);
    std::string path = reproducerDirectory + "/reproducer.mlir";
    llvm::sys::fs::remove(path);
    pm.enableCrashReproducerGeneration(path, /*genLocalReproducer=*/true);
    run.reproducer = path;
  }
  size_t depth = frameCount;
  run.failed = mlir::failed(pm.run(op));
  // Crash recovery unwinds without running the frames' destructors: frames
  // left above the depth this run started at mean a pass crashed.
  if (frameCount > depth) {
    run.crashed = true;
    llvm::errs() << toolName << ": internal error: a pass crashed (a bug in Cuvil, not in the model)\n";
    printFrames(llvm::errs(), depth, /*stale=*/true);
    popTo(depth);
  }
  if (!run.crashed && !run.failed)
    run.reproducer.clear();
  return run;
}

CrashFrame::CrashFrame(Describe describe, const void *cookie) {
  Frame f;
  f.kind = Frame::Kind::Callback;
  f.describe = describe;
  f.cookie = cookie;
  depth_ = push(f);
}

CrashFrame::CrashFrame(llvm::StringRef what) {
  Frame f;
  f.text = what;
  depth_ = push(f);
}

CrashFrame::~CrashFrame() { popTo(depth_); }

void crashPoint(llvm::StringRef kind, llvm::StringRef name) { maybeInjectCrash(kind, name); }

std::string sourceLine(mlir::Location loc) {
  // The innermost file location: for a call site the callee's line.
  std::string out;
  loc->walk([&](mlir::Location l) {
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(l)) {
      out = file.getFilename().str();
      if (file.getLine() != 0) // the module's location: the file alone
        out += ":" + std::to_string(file.getLine());
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return out;
}

} // namespace cuvil
