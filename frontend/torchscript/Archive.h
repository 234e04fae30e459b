//===- Archive.h - The layout of a TorchScript archive ----------*- C++ -*-===//
//
// What torch.jit.save writes inside the zip: one top-level folder holding
// `version`, `data.pkl` (the module tree), `constants.pkl` (CONSTANTS.cN),
// tensor storages under `data/` and `constants/`, the serialized code under
// `code/` and `.debug_pkl` source-range records next to each code file. The
// archive validates that layout (RELIABILITY.md A9, A12), parses code files
// on first use, and reads storages bounded by their records' real sizes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_ARCHIVE_H
#define CUVIL_FRONTEND_TORCHSCRIPT_ARCHIVE_H

#include "frontend/torchscript/Ast.h"
#include "frontend/torchscript/Pickle.h"
#include "frontend/torchscript/ZipArchive.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace cuvil::torchscript {

/// TorchScript file format versions this reader understands.
constexpr int64_t kMinFormatVersion = 1;
constexpr int64_t kMaxFormatVersion = 12;

/// Where a position in serialized code came from in the user's Python.
struct OriginalLocation {
  std::string file;
  unsigned line = 0;
};

/// A tensor's data gathered into a contiguous, 64-byte aligned buffer.
struct TensorData {
  std::shared_ptr<char> bytes; ///< aligned_alloc'ed, freed by the deleter
  size_t size = 0;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
};

class TorchScriptArchive {
public:
  static Result<std::unique_ptr<TorchScriptArchive>> open(const std::string &path);

  const std::string &path() const { return zip_.path(); }
  int64_t formatVersion() const { return version_; }
  /// The root module object (data.pkl).
  const PValue *root() const { return data_.root(); }
  /// CONSTANTS.c<i>: the tuple in constants.pkl.
  const PValue *constant(size_t i) const;
  size_t numConstants() const;

  /// The parsed code file for a qualified module name such as
  /// "__torch__.torch.nn.modules.conv" (code/__torch__/torch/nn/modules/conv.py),
  /// or null when there is no such file. Syntax errors are returned.
  Result<const SourceFile *> codeFile(const std::string &qualifiedModule);

  /// Reads the data of a tensor rebuilt by a pickle (with its strides).
  /// `fromConstants` selects constants/ rather than data/ records.
  Result<TensorData> tensorData(const PValue &tensor, bool fromConstants);

  /// The original Python location of an offset in a code file, if the
  /// archive's debug records say.
  std::optional<OriginalLocation> originalLocation(const SourceFile &file,
                                                   uint32_t offset);

private:
  struct DebugRecord {
    uint32_t codeOffset;
    const PValue *range; ///< ((text, file, line) or string-table form, start, end)
  };
  struct DebugInfo {
    Pickle pickle;
    const PValue *stringTable = nullptr;
    std::vector<DebugRecord> records;
  };

  explicit TorchScriptArchive(ZipArchive zip) : zip_(std::move(zip)) {}
  Status validateLayout();
  Error error(const std::string &code, const std::string &msg) const {
    return inputError(path() + ": " + code + ": " + msg);
  }
  DebugInfo *debugInfo(const SourceFile &file);

  ZipArchive zip_;
  std::string prefix_; ///< "<name>/"
  int64_t version_ = 0;
  Pickle data_, constants_;
  std::map<std::string, std::unique_ptr<SourceFile>> code_;
  std::map<std::string, bool> codeMissing_;
  std::map<std::string, std::unique_ptr<DebugInfo>> debug_;
};

} // namespace cuvil::torchscript

#endif // CUVIL_FRONTEND_TORCHSCRIPT_ARCHIVE_H
