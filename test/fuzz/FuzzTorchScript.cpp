//===- FuzzTorchScript.cpp - Fuzz the TorchScript readers -----------------===//
//
// One target for every reader of untrusted input. The first byte picks the
// reader, the rest is its input:
//   0: the zip container (every entry is read and inflated)
//   1: the pickle VM
//   2: the TorchScript source parser
//   3: the whole import of an archive (input shape 0=2x3xf32)
// Built with libFuzzer under -DCUVIL_ENABLE_FUZZING=ON (see scripts/fuzz.sh);
// without it, main() replays files or directories given on the command line
// (ctest replays the regression inputs this way).
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/Importer.h"
#include "frontend/torchscript/Parser.h"
#include "frontend/torchscript/Pickle.h"
#include "frontend/torchscript/ZipArchive.h"

#include "mlir/IR/MLIRContext.h"

#include "FuzzSupport.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

using namespace cuvil;
using namespace cuvil::torchscript;

namespace {


void fuzzZip(const uint8_t *data, size_t size) {
  cuvil::fuzz::MemFile f(data, size);
  if (f.fd < 0)
    return;
  ZipLimits limits;
  limits.maxEntrySize = 1 << 24;
  limits.maxTotalSize = 1 << 26;
  Result<ZipArchive> zip = ZipArchive::open(f.path, limits);
  if (!zip)
    return;
  for (const ZipEntry &e : zip->entries())
    (void)zip->read(e);
}

void fuzzImport(const uint8_t *data, size_t size) {
  cuvil::fuzz::MemFile f(data, size);
  if (f.fd < 0)
    return;
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  ImportOptions options;
  InputSpec spec;
  spec.key = "0";
  spec.shape = {2, 3};
  options.inputs.push_back(spec);
  (void)importTorchScript(context, f.path, options);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const uint8_t *payload = data + 1;
  size_t n = size - 1;
  switch (data[0] % 4) {
  case 0:
    fuzzZip(payload, n);
    break;
  case 1:
    (void)Pickle::parse(std::string_view(reinterpret_cast<const char *>(payload), n), "fuzz.pkl");
    break;
  case 2:
    (void)parseSource("fuzz.py", std::string(reinterpret_cast<const char *>(payload), n));
    break;
  case 3:
    fuzzImport(payload, n);
    break;
  }
  return 0;
}

#ifndef CUVIL_LIBFUZZER

int main(int argc, char **argv) { return cuvil::fuzz::replayMain(argc, argv, LLVMFuzzerTestOneInput); }
#endif
