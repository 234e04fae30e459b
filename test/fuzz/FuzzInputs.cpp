//===- FuzzInputs.cpp - Fuzz what cuvil-run and the tools read ------------===//
//
// The readers of untrusted input outside the importer. The first byte picks
// the reader, the rest is its input:
//   0: a .npy file in memory (parseNpy)
//   1: a .npy file read from a file (readNpy: the header first, checked
//      against the file's size and an expected dtype and shape)
//   2: a library checked before dlopen (checkSharedLibrary: ELF header,
//      segments, sections, the dynamic symbol table); never loaded
//   3: IR text checked for nesting before the MLIR parser sees it
// Built with libFuzzer under -DCUVIL_ENABLE_FUZZING=ON (scripts/fuzz.sh
// inputs); without it, main() replays files or directories (ctest).
//
//===----------------------------------------------------------------------===//
#include "support/ElfCheck.h"
#include "support/IrNesting.h"
#include "support/Npy.h"

#include "FuzzSupport.h"

#include <cstdint>
#include <string>
#include <unistd.h>

using namespace cuvil;

namespace {


void fuzzReadNpy(const uint8_t *data, size_t size) {
  if (size < 2)
    return;
  // What the model expects, from the first two bytes: a dtype and a shape.
  static const DType kTypes[] = {DType::Float32, DType::Int64, DType::Bool, DType::Float16, DType::UInt8};
  NpyExpectation expect{"input 0", kTypes[data[0] % 5], {}};
  for (int i = 0; i < data[1] % 4; ++i)
    expect.shape.push_back((data[1] >> (2 + i)) & 1 ? -1 : 2 + i);
  cuvil::fuzz::MemFile f(data + 2, size - 2);
  if (f.fd < 0)
    return;
  (void)readNpy(f.path, data[0] & 0x80 ? &expect : nullptr);
}

void fuzzLibrary(const uint8_t *data, size_t size) {
  cuvil::fuzz::MemFile f(data, size);
  if (f.fd < 0)
    return;
  (void)checkSharedLibrary(f.path, hostElfMachine(), "cuvil_abi_version");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const uint8_t *payload = data + 1;
  size_t n = size - 1;
  std::string_view text(reinterpret_cast<const char *>(payload), n);
  switch (data[0] % 4) {
  case 0:
    (void)parseNpy(text, "fuzz.npy");
    break;
  case 1:
    fuzzReadNpy(payload, n);
    break;
  case 2:
    fuzzLibrary(payload, n);
    break;
  case 3:
    (void)checkIrNesting(text, "fuzz.mlir");
    break;
  }
  return 0;
}

#ifndef CUVIL_LIBFUZZER

int main(int argc, char **argv) { return cuvil::fuzz::replayMain(argc, argv, LLVMFuzzerTestOneInput); }
#endif
