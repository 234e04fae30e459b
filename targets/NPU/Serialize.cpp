//===- Serialize.cpp - NPU programs as bytes ------------------------------===//
#include "targets/NPU/Serialize.h"

#include "targets/NPU/IR/Commands.h"
#include "targets/NPU/Support.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
#include <limits>

namespace mlir::cuvil::npu {

namespace {

/// The bytes of a constants attribute (a resource blob or dense i8).
FailureOr<ArrayRef<char>> constantBytes(ProgramOp program) {
  ElementsAttr attr = program.getConstants();
  if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = r.getRawHandle().getBlob();
    if (!blob)
      return program.emitError() << "the program's constants resource has no data";
    return blob->getData();
  }
  if (auto d = llvm::dyn_cast<DenseElementsAttr>(attr)) {
    if (d.getNumElements() == 0)
      return ArrayRef<char>();
    if (!d.isSplat())
      return d.getRawData();
  }
  return program.emitError() << "the program's constants must be a dense_resource or dense i8 tensor";
}

class Writer {
public:
  size_t align(size_t to) {
    bytes.resize((bytes.size() + to - 1) / to * to, 0);
    return bytes.size();
  }
  template <typename T> void put(const T &value) {
    size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &value, sizeof(T));
  }
  void put(ArrayRef<char> raw) { bytes.insert(bytes.end(), raw.begin(), raw.end()); }
  std::vector<uint8_t> bytes;
};

} // namespace

FailureOr<std::vector<uint8_t>> serializeProgram(ProgramOp program) {
  FailureOr<ArrayRef<char>> constants = constantBytes(program);
  if (failed(constants))
    return failure();
  SmallVector<cuvil_npu_command> commands;
  for (Operation &op : program.getBody().front())
    commands.push_back(encodeCommand(&op));

  std::string strings(1, '\0'); // offset 0: ""
  auto intern = [&](StringRef s) {
    uint32_t at = static_cast<uint32_t>(strings.size());
    strings.append(s.data(), s.size());
    strings.push_back('\0');
    return at;
  };
  uint32_t nameOffset = intern(program.getSymName());
  SmallVector<cuvil_npu_layer> layers;
  for (auto [name, kind, macs] :
       llvm::zip(program.getLayers(), program.getLayerKinds(), program.getLayerMacs())) {
    cuvil_npu_layer l;
    std::memset(&l, 0, sizeof l);
    l.name_offset = intern(llvm::cast<StringAttr>(name).getValue());
    l.kind_offset = intern(llvm::cast<StringAttr>(kind).getValue());
    l.macs = macs;
    layers.push_back(l);
  }
  SmallVector<cuvil_npu_region> regions;
  int32_t argument = 0;
  for (Type t : program.getInputs().getTypes())
    regions.push_back({CUVIL_NPU_REGION_ARGUMENT, argument++, tensorBytes(t)});
  for (Type t : program.getResultTypes())
    regions.push_back({CUVIL_NPU_REGION_ARGUMENT, argument++, tensorBytes(t)});
  regions.push_back({CUVIL_NPU_REGION_CONSTANTS, 0, static_cast<int64_t>(constants->size())});
  regions.push_back({CUVIL_NPU_REGION_SCRATCH, 0, static_cast<int64_t>(program.getScratchBytes())});

  Writer w;
  cuvil_npu_header h;
  std::memset(&h, 0, sizeof h);
  w.put(h); // filled in at the end
  h.magic = CUVIL_NPU_MAGIC;
  h.version = CUVIL_NPU_ISA_VERSION;
  h.config = configFromWords(program.getConfig());
  h.num_commands = static_cast<uint32_t>(commands.size());
  h.commands_offset = static_cast<uint32_t>(w.align(8));
  for (const cuvil_npu_command &c : commands)
    w.put(c);
  h.num_regions = static_cast<uint32_t>(regions.size());
  h.regions_offset = static_cast<uint32_t>(w.align(8));
  for (const cuvil_npu_region &r : regions)
    w.put(r);
  h.num_layers = static_cast<uint32_t>(layers.size());
  h.layers_offset = static_cast<uint32_t>(w.align(8));
  for (const cuvil_npu_layer &l : layers)
    w.put(l);
  h.constants_offset = static_cast<uint32_t>(w.align(64));
  h.constants_bytes = static_cast<uint32_t>(constants->size());
  w.put(*constants);
  h.strings_offset = static_cast<uint32_t>(w.align(8));
  h.strings_bytes = static_cast<uint32_t>(strings.size());
  w.put(ArrayRef<char>(strings.data(), strings.size()));
  w.align(8);
  h.num_arguments = static_cast<uint32_t>(argument);
  h.scratch_bytes = static_cast<uint32_t>(program.getScratchBytes());
  h.blob_bytes = static_cast<uint32_t>(w.bytes.size());
  h.name_offset = nameOffset;
  if (w.bytes.size() > std::numeric_limits<uint32_t>::max() ||
      program.getScratchBytes() > std::numeric_limits<uint32_t>::max())
    return program.emitError() << "the NPU program or its scratch exceeds 4 GiB";
  std::memcpy(w.bytes.data(), &h, sizeof h);
  return std::move(w.bytes);
}

} // namespace mlir::cuvil::npu
