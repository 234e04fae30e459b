//===- Pickle.h - An allowlisting reader of PyTorch's pickles --*- C++ -*-===//
//
// data.pkl, constants.pkl and the .debug_pkl records are Python pickles. This
// is not a Python unpickler: it runs the protocol 2-5 opcodes PyTorch writes
// on a bounded stack, resolves GLOBALs against a small allowlist (tensor and
// parameter rebuilders, storages, ordered dicts, TorchScript list builders,
// __torch__ classes) and rejects anything else at the opcode that names it
// (RELIABILITY.md B1). Nothing is ever executed. Values live in an arena, so
// cyclic or deeply shared structures cannot leak or overflow the stack when
// freed; nesting depth is bounded.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_PICKLE_H
#define CUVIL_FRONTEND_TORCHSCRIPT_PICKLE_H

#include "support/DType.h"
#include "support/Status.h"

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuvil::torchscript {

/// Deepest container nesting accepted (and walked by consumers).
constexpr int kMaxPickleDepth = 1000;

struct PValue {
  enum class Kind {
    None, Bool, Int, Float, String, Bytes, Tuple, List, Dict,
    Global,  ///< an allowlisted callable or class ("module.name" in str)
    Object,  ///< a TorchScript class instance: class name in str, state
    Storage, ///< a persistent storage reference
    Tensor,  ///< a rebuilt tensor (view of a storage)
  };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string str;                         ///< String, Bytes, Global, Object
  std::vector<PValue *> items;             ///< Tuple, List
  std::vector<std::pair<PValue *, PValue *>> dict;
  PValue *state = nullptr;                 ///< Object (set by BUILD)
  // Storage
  std::string storageKey;                  ///< the record name under data/
  DType dtype = DType::Float32;
  int64_t storageNumel = 0;
  // Tensor
  PValue *storage = nullptr;
  int64_t storageOffset = 0;
  std::vector<int64_t> sizes, strides;
  bool requiresGrad = false;
  /// Tensor rebuilt by _rebuild_qtensor: its storage holds integers whose
  /// meaning is (q - zero point) * scale, per tensor or per channel.
  enum class QScheme { None, PerTensorAffine, PerChannelAffine };
  QScheme qscheme = QScheme::None;
  double qscale = 0;              ///< per tensor
  int64_t qzeroPoint = 0;         ///< per tensor
  PValue *qscales = nullptr;      ///< per channel: a float tensor
  PValue *qzeroPoints = nullptr;  ///< per channel: an integer tensor
  int64_t qaxis = -1;             ///< per channel
  int depth = 0;

  bool is(Kind k) const { return kind == k; }
  /// Dict lookup by string key; null when absent.
  const PValue *get(std::string_view key) const;
  /// "int", "tuple", ... for messages.
  const char *kindName() const;
};

/// The values of one pickle, owned by an arena.
class Pickle {
public:
  Pickle() = default;
  Pickle(Pickle &&) = default;
  Pickle &operator=(Pickle &&) = default;
  PValue *root() const { return root_; }

  /// Runs the pickle program in `bytes`. `name` labels errors (archive entry).
  static Result<Pickle> parse(std::string_view bytes, const std::string &name);

private:
  friend class PickleMachine;
  PValue *make(PValue::Kind k);
  std::deque<PValue> arena_;
  PValue *root_ = nullptr;
};

} // namespace cuvil::torchscript

#endif // CUVIL_FRONTEND_TORCHSCRIPT_PICKLE_H
