//===- Codegen.cpp - LLVM IR to objects and shared libraries --------------===//
#include "targets/CPU/Codegen.h"

#include "support/AtomicFile.h"
#include "support/Staging.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

LLD_HAS_DRIVER(elf)

// Debian's static LLVM lists Polly as a static extension of the LTO backend
// (which lld pulls in) but ships no libPolly.a. Cuvil never runs LTO; an
// empty plug-in satisfies the reference.
llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "polly-unavailable", "0", [](llvm::PassBuilder &) {}};
}

extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86Target();
void LLVMInitializeX86TargetMC();
void LLVMInitializeX86AsmPrinter();
void LLVMInitializeAArch64TargetInfo();
void LLVMInitializeAArch64Target();
void LLVMInitializeAArch64TargetMC();
void LLVMInitializeAArch64AsmPrinter();
}

namespace mlir::cuvil {

using ::cuvil::Error;
using ::cuvil::Result;
using ::cuvil::Status;

namespace {

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
  });
}

/// The directory the runtime archives are in: CUVIL_RUNTIME_DIR, else
/// ../lib next to this executable (the build tree's layout).
std::string runtimeDirectory() {
  if (const char *env = std::getenv("CUVIL_RUNTIME_DIR"))
    return env;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, reinterpret_cast<void *>(&runtimeDirectory));
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(dir, "lib");
  return std::string(dir);
}

/// The CPU features the runtime knows how to check (cpu_features.c).
const char *const kCheckedFeatures[] = {
    // x86-64
    "sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512dq", "avx512vl",
    "avx512vnni", "avx512bf16", "amx-tile", "amx-int8", "amx-bf16",
    // aarch64
    "neon", "fp-armv8", "dotprod", "fullfp16", "i8mm", "bf16", "sve"};

} // namespace

Result<CpuTarget> makeCpuTarget(const CpuTargetSpec &spec, const std::string &cpu,
                                const std::string &features) {
  initializeTargets();
  CpuTarget t;
  t.name = spec.name;
  t.triple = spec.triple;
  t.emulation = spec.emulation;
  t.systemLibraries = spec.systemLibraries;
  t.runtimeArchive = runtimeDirectory() + "/" + spec.runtimeArchive;
  spec.chooseCpu(cpu, t);
  if (!features.empty())
    t.features = features;
  const std::string &name = spec.name;
  std::string message;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(t.triple, message);
  if (!target)
    return Error{"LLVM cannot generate code for " + t.triple + ": " + message, ::cuvil::kExitInputError};
  // Reject unknown CPU names here, with the list, rather than LLVM's warning.
  if (!cpu.empty()) {
    // Asked of a generic subtarget: one made for an unknown CPU prints
    // LLVM's "(ignoring processor)" warning.
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(t.triple, "", ""));
    if (!sti || !sti->isCPUStringValid(t.cpu))
      return Error{"unknown CPU '" + cpu + "' for " + name +
                       " (see `llc-19 -mtriple=" + t.triple + " -mcpu=help`)",
                   ::cuvil::kExitUsageError};
  }
  if (!features.empty()) {
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(t.triple, "", ""));
    llvm::SmallVector<llvm::StringRef> names;
    llvm::StringRef(features).split(names, ',', -1, false);
    for (llvm::StringRef f : names) {
      llvm::StringRef bare = f.drop_while([](char c) { return c == '+' || c == '-'; });
      bool known = llvm::any_of(sti->getAllProcessorFeatures(),
                                [&](const llvm::SubtargetFeatureKV &kv) { return bare == kv.Key; });
      if (!known)
        return Error{"unknown feature '" + bare.str() + "' for " + name + " (see `llc-19 -mtriple=" +
                         t.triple + " -mattr=help`)",
                     ::cuvil::kExitUsageError};
    }
  }
  return t;
}

std::vector<std::string> requiredFeatures(const CpuTarget &target) {
  std::string err;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(target.triple, err);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      t->createMCSubtargetInfo(target.triple, target.cpu, target.features));
  std::vector<std::string> out;
  for (const char *f : kCheckedFeatures) {
    const llvm::SubtargetFeatureKV *kv = nullptr;
    for (const llvm::SubtargetFeatureKV &entry : sti->getAllProcessorFeatures())
      if (llvm::StringRef(entry.Key) == f)
        kv = &entry;
    if (kv && sti->getFeatureBits().test(kv->Value))
      out.push_back(f);
  }
  return out;
}

void runO3(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&machine);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
}

Result<std::string> emitMachineCode(llvm::Module &module, const CpuTarget &target,
                                    OutputKind kind) {
  initializeTargets();
  std::string message;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(target.triple, message);
  if (!t)
    return Error{message, ::cuvil::kExitInputError};
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      target.triple, target.cpu, target.features, options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  module.setTargetTriple(target.triple);
  module.setDataLayout(tm->createDataLayout());
  for (llvm::Function &f : module) // tune every function for the CPU
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", target.cpu);
      if (!target.features.empty())
        f.addFnAttr("target-features", target.features);
    }

  runO3(module, *tm);

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr,
                              kind == OutputKind::Object ? llvm::CodeGenFileType::ObjectFile
                                                         : llvm::CodeGenFileType::AssemblyFile))
    return Error{"LLVM cannot emit code for " + target.triple, ::cuvil::kExitInputError};
  codegen.run(module);
  return std::string(buffer.begin(), buffer.end());
}

std::vector<std::string> runtimeApiFunctions() {
  std::vector<std::string> names;
  llvm::StringRef text = runtimeExportsMapText();
  bool global = false;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line == "global:" || line == "local:") {
      global = line == "global:";
      continue;
    }
    if (global && line.starts_with("cuvil_") && line.ends_with(";"))
      names.push_back(line.drop_back().trim().str());
  }
  return names;
}

/// The version script: the C API's functions (renamed PREFIX_* with a
/// prefix, the cuvil_* originals then local too).
std::string exportsMap(const std::string &prefix) {
  if (prefix.empty())
    return runtimeExportsMapText();
  std::string map = "{\n  global:\n";
  for (const std::string &f : runtimeApiFunctions())
    map += "    " + prefix + f.substr(5) + ";\n";
  return map + "  local:\n    *;\n};\n";
}

namespace {

/// The link's inputs: lld reads files. Held in memory files (memfd) where
/// the system has them, so that a weights object of a hundred megabytes is
/// not written to disk to be read back at once; else temporary files next
/// to the output, removed when the link is done (or the process killed).
class TempFiles {
public:
  explicit TempFiles(std::string next) : next_(std::move(next)) {}
  ~TempFiles() {
    for (const std::string &p : paths_) {
      llvm::sys::fs::remove(p);
      llvm::sys::DontRemoveFileOnSignal(p);
    }
    for (int fd : memoryFiles_)
      ::close(fd);
  }
  /// An input holding `bytes`: its path.
  Result<std::string> input(const std::string &suffix, llvm::StringRef bytes) {
#ifdef __linux__
    int fd = ::memfd_create("cuvil-link-input", MFD_CLOEXEC);
    if (fd >= 0) {
      memoryFiles_.push_back(fd);
      size_t done = 0;
      while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
          continue;
        if (n <= 0)
          return ::cuvil::ioError(std::string("cannot hold a link input in memory: ") +
                                  std::strerror(errno));
        done += n;
      }
      std::string path = "/proc/self/fd/" + std::to_string(fd);
      if (llvm::sys::fs::exists(path))
        return path;
    }
#endif
    return write(suffix, bytes);
  }
  /// A new file holding `bytes` (not synced: it is read at once and deleted).
  Result<std::string> write(const std::string &suffix, llvm::StringRef bytes) {
    llvm::SmallString<256> path;
    int fd = -1;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(next_ + ".%%%%%%" + suffix, fd, path))
      return ::cuvil::ioError("cannot create a temporary file next to '" + next_ + "': " +
                              ec.message());
    paths_.push_back(std::string(path));
    llvm::sys::RemoveFileOnSignal(path);
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.close();
    if (os.has_error())
      return ::cuvil::ioError("cannot write the temporary file '" + std::string(path) +
                              "': " + os.error().message());
    return std::string(path);
  }

private:
  std::string next_;
  std::vector<std::string> paths_;
  std::vector<int> memoryFiles_;
};

Status runLld(const std::vector<std::string> &args, const std::string &outputPath) {
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  std::string out, err;
  llvm::raw_string_ostream outOS(out), errOS(err);
  lld::Result r = lld::lldMain(argv, outOS, errOS, {{lld::Gnu, &lld::elf::link}});
  if (r.retCode != 0) {
    llvm::sys::fs::remove(outputPath);
    llvm::StringRef why = errOS.str();
    if (why.contains("Cannot allocate memory") || why.contains("out of memory"))
      return ::cuvil::withId(::cuvil::inputError("out of memory while linking the library (" + why.trim().str() +
                                                 "): free memory or raise the limit (ulimit -v)"),
                             "CUVIL-E-OOM");
    if (why.contains("No space left on device"))
      return ::cuvil::ioError("No space left on device (" + why.trim().str() + ")");
    return ::cuvil::inputError("linking the library failed: " + errOS.str());
  }
  return Status::ok();
}

} // namespace

Status linkSharedLibrary(const std::vector<std::string> &objects, const CpuTarget &target,
                         const std::string &outputPath, const std::string &soname,
                         const std::string &symbolPrefix) {
  if (!llvm::sys::fs::exists(target.runtimeArchive))
    return ::cuvil::inputError("the " + target.name + " runtime (" + target.runtimeArchive +
                               ") is missing: build the project's runtime for " + target.name +
                               " (or set CUVIL_RUNTIME_DIR)");
  for (const std::string &lib : target.systemLibraries)
    if (!llvm::sys::fs::exists(lib))
      return ::cuvil::inputError("the " + target.name + " C library (" + lib +
                                 ") is missing: install the target's libc");
  TempFiles temps(outputPath);
  // Only the C API leaves the library.
  Result<std::string> map = temps.input(".map", exportsMap(symbolPrefix));
  if (!map)
    return map.error();
  // Written, not mapped: a full disk is then an error, not SIGBUS.
  std::vector<std::string> args = {"ld.lld", "-m", target.emulation, "-shared",
                                   "--no-mmap-output-file",
                                   "--version-script", *map,
                                   "-soname", soname, "--no-undefined",
                                   "--build-id=none", "--gc-sections", "-z", "noexecstack",
                                   "-z", "now", "-o", outputPath};
  for (const std::string &object : objects) {
    if (object.empty())
      continue;
    Result<std::string> path = temps.input(".o", object);
    if (!path)
      return path.error();
    args.push_back(*path);
  }
  // The whole runtime: nothing in the model's object references the C API
  // it exports.
  for (const char *a : {"--whole-archive", target.runtimeArchive.c_str(), "--no-whole-archive"})
    args.push_back(a);
  for (const std::string &lib : target.systemLibraries)
    args.push_back(lib);
  // PREFIX_f is another name of cuvil_f (which the version script hides).
  if (!symbolPrefix.empty())
    for (const std::string &f : runtimeApiFunctions())
      args.push_back("--defsym=" + symbolPrefix + f.substr(5) + "=" + f);
  return runLld(args, outputPath);
}

Result<std::string> combineObjects(const std::vector<std::string> &objects, const CpuTarget &target,
                                   const std::string &nextTo) {
  std::vector<std::string> present;
  for (const std::string &o : objects)
    if (!o.empty())
      present.push_back(o);
  if (present.size() == 1)
    return present.front();
  // In the staging directory of the output (removed whatever happens).
  Result<std::string> resolved = ::cuvil::resolveOutputPath(nextTo);
  if (!resolved)
    return resolved.error();
  Result<std::string> staged = ::cuvil::stagingPathFor(*resolved);
  if (!staged)
    return staged.error();
  TempFiles temps(*staged);
  Result<std::string> out = temps.write(".r.o", "");
  if (!out)
    return out.error();
  std::vector<std::string> args = {"ld.lld", "-m", target.emulation, "-r",
                                   "--no-mmap-output-file", "-o", *out};
  for (const std::string &object : present) {
    Result<std::string> path = temps.input(".o", object);
    if (!path)
      return path.error();
    args.push_back(*path);
  }
  if (Status s = runLld(args, *out); !s)
    return s.error();
  auto buffer = llvm::MemoryBuffer::getFile(*out, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return ::cuvil::ioError("cannot read '" + *out + "': " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

} // namespace mlir::cuvil
