//===- Ptx.cpp - LLVM IR kernels to PTX and cubins ------------------------===//
#include "targets/CUDA/Ptx.h"

#include "targets/CPU/Codegen.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/Internalize.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace mlir::cuvil::cuda {

using ::cuvil::Result;

namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

/// The PTX ISA version each architecture needs (LLVM picks the lowest it
/// knows otherwise, which sm_90 rejects).
const std::map<std::string, std::string> &ptxVersions() {
  static const std::map<std::string, std::string> versions = {
      {"sm_80", "+ptx70"}, {"sm_86", "+ptx71"}, {"sm_89", "+ptx78"}, {"sm_90", "+ptx78"}};
  return versions;
}

void initializeNvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// The CUDA toolkit's libdevice (the math functions as bitcode), or "".
std::string findLibdevice(const std::string &ptxas) {
  std::vector<std::string> roots;
  if (const char *cuda = std::getenv("CUDA_PATH"))
    roots.push_back(cuda);
  if (!ptxas.empty()) // TOOLKIT/bin/ptxas
    roots.push_back(llvm::sys::path::parent_path(llvm::sys::path::parent_path(ptxas)).str());
  roots.push_back("/usr/local/cuda");
  roots.push_back("/usr/lib/cuda");
  for (const std::string &root : roots) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::exists(path))
      return path.str().str();
  }
  return "";
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

/// Runs ptxas on `ptx` for `arch`; the cubin, or ptxas' message.
Result<std::string> assemble(const std::string &ptxas, const std::string &ptx, const std::string &arch) {
  llvm::SmallString<128> in, out, log;
  if (llvm::sys::fs::createTemporaryFile("cuvil-kernels", "ptx", in) ||
      llvm::sys::fs::createTemporaryFile("cuvil-kernels", "cubin", out) ||
      llvm::sys::fs::createTemporaryFile("cuvil-ptxas", "log", log))
    return ::cuvil::ioError("cannot create temporary files for ptxas");
  struct Cleanup {
    std::vector<std::string> paths;
    ~Cleanup() {
      for (const std::string &p : paths)
        llvm::sys::fs::remove(p);
    }
  } cleanup{{in.str().str(), out.str().str(), log.str().str()}};
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return ::cuvil::ioError("cannot write '" + in.str().str() + "': " + ec.message());
    os << ptx;
  }
  std::string archFlag = "-arch=" + arch;
  std::string outPath = out.str().str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, archFlag, "-O3", "-o", outPath, in};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, /*SecondsToWait=*/300, 0, &error);
  if (rc != 0) {
    std::string message = readFile(log.str().str());
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
      message.pop_back();
    return ::cuvil::inputError("ptxas (" + ptxas + ") rejected the PTX for " + arch + " (exit " +
                               std::to_string(rc) + (error.empty() ? "" : ", " + error) + "): " + message);
  }
  return readFile(outPath);
}

} // namespace

std::string supportedArchs() {
  std::string s;
  for (const auto &[arch, version] : ptxVersions())
    s += (s.empty() ? "" : ", ") + arch;
  return s;
}

FailureOr<std::vector<std::string>> parseArchs(llvm::StringRef list) {
  llvm::SmallVector<llvm::StringRef> parts;
  list.split(parts, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> archs;
  for (llvm::StringRef p : parts) {
    std::string arch = p.trim().str();
    if (!ptxVersions().count(arch))
      return failure();
    if (std::find(archs.begin(), archs.end(), arch) == archs.end())
      archs.push_back(arch);
  }
  if (archs.empty())
    return failure();
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::string findPtxas(const std::string &explicitPath) {
  if (explicitPath == "none")
    return "";
  if (!explicitPath.empty())
    return llvm::sys::fs::can_execute(explicitPath) ? explicitPath : "";
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  std::vector<std::string> dirs;
  if (const char *cuda = std::getenv("CUDA_PATH"))
    dirs.push_back(std::string(cuda) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  for (const std::string &d : dirs)
    if (llvm::sys::fs::can_execute(d + "/ptxas"))
      return d + "/ptxas";
  return "";
}

Result<std::vector<KernelImage>> compileKernels(const llvm::Module &module, const std::vector<std::string> &kernels,
                                                const std::vector<std::string> &archs, const PtxOptions &options) {
  initializeNvptx();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target)
    return ::cuvil::inputError("this compiler's LLVM has no NVPTX back end: " + error);
  std::string ptxas = findPtxas(options.ptxas);
  if (ptxas.empty() && !options.ptxas.empty() && options.ptxas != "none")
    return ::cuvil::usageError("ptxas: '" + options.ptxas + "' is not an executable");
  if (ptxas.empty() && options.requirePtxas)
    return ::cuvil::inputError("no ptxas found (PATH, $CUDA_PATH/bin, /usr/local/cuda/bin) to assemble the "
                               "kernels; install the CUDA toolkit or leave the cubins out");

  // Does the code call libdevice (__nv_expf, ...)?
  bool needsLibdevice = false;
  std::string firstMath;
  for (const llvm::Function &f : module)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) {
      needsLibdevice = true;
      if (firstMath.empty())
        firstMath = f.getName().str();
    }
  std::string libdevice = needsLibdevice ? findLibdevice(ptxas) : "";
  if (needsLibdevice && libdevice.empty())
    return ::cuvil::inputError("the kernels call " + firstMath +
                               " of CUDA's libdevice, which was not found (nvvm/libdevice/libdevice.10.bc "
                               "under $CUDA_PATH or /usr/local/cuda)");

  std::vector<KernelImage> images;
  for (const std::string &arch : archs) {
    std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
        kTriple, arch, ptxVersions().at(arch), llvm::TargetOptions(), std::nullopt, std::nullopt,
        llvm::CodeGenOptLevel::Aggressive));
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
    copy->setTargetTriple(kTriple);
    copy->setDataLayout(machine->createDataLayout());
    if (needsLibdevice) {
      llvm::SMDiagnostic diag;
      std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(libdevice, diag, copy->getContext());
      if (!lib)
        return ::cuvil::inputError("cannot read libdevice '" + libdevice + "': " + diag.getMessage().str());
      lib->setTargetTriple(kTriple);
      lib->setDataLayout(copy->getDataLayout());
      if (llvm::Linker::linkModules(*copy, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded))
        return ::cuvil::inputError("linking libdevice '" + libdevice + "' into the kernels failed");
    }
    // Only the kernels stay visible: the rest inlines and folds away.
    llvm::internalizeModule(*copy, [&](const llvm::GlobalValue &g) {
      return std::find(kernels.begin(), kernels.end(), g.getName().str()) != kernels.end();
    });
    runO3(*copy, *machine);
    std::string ptx;
    {
      llvm::raw_string_ostream os(ptx);
      llvm::buffer_ostream out(os);
      llvm::legacy::PassManager pm;
      if (machine->addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::AssemblyFile))
        return ::cuvil::inputError("LLVM's NVPTX back end cannot emit PTX for " + arch);
      pm.run(*copy);
    }
    images.push_back({KernelImage::Ptx, std::stoi(arch.substr(3)), ptx});
  }
  if (ptxas.empty())
    return images;
  // ptxas on every architecture at once (it takes most of the time).
  std::vector<std::optional<Result<std::string>>> cubins(archs.size());
  std::vector<std::thread> workers;
  for (size_t i = 0; i < archs.size(); ++i)
    workers.emplace_back([&, i] { cubins[i] = assemble(ptxas, images[i].bytes, archs[i]); });
  for (std::thread &w : workers)
    w.join();
  std::vector<KernelImage> all;
  for (size_t i = 0; i < archs.size(); ++i) {
    if (!*cubins[i])
      return cubins[i]->error();
    all.push_back(std::move(images[i]));
    all.push_back({KernelImage::Cubin, all.back().sm, std::move(**cubins[i])});
  }
  return all;
}

} // namespace mlir::cuvil::cuda
