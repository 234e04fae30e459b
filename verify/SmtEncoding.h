//===- SmtEncoding.h - cuvil ops as Z3 terms, one element at a time -------===//
//
// A tensor of static shape is encoded as a function from an index (Z3
// integers) to the term of that element, so views, broadcasts and small
// reductions are exact index arithmetic and element-wise ops are scalar
// terms. Two arithmetics:
//  - IEEE: floats are Z3 floating-point terms rounded to nearest-even, so a
//    proof holds bit for bit (NaNs count as equal, +0 and -0 do not);
//  - Real: floats are real numbers and transcendental functions are
//    uninterpreted with the axioms they need (exp(a - b) * exp(b) = exp(a)),
//    for rewrites that claim only an algebraic identity.
// Integers are bit-vectors of their width, i1 is Bool. An op the encoder does
// not model becomes an uninterpreted function of its operands' encodings, its
// attributes and its type: equal on both sides of a rewrite that keeps it,
// unconstrained otherwise. Values the caller does not ask to look through
// are free tensors.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_VERIFY_SMTENCODING_H
#define CUVIL_VERIFY_SMTENCODING_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <z3++.h>

#include <deque>
#include <functional>
#include <map>
#include <string>

namespace cuvil::verify {

enum class Arithmetic { IEEE, Real };

const char *arithmeticName(Arithmetic a);

/// A tensor as a function from its index to the term of its element.
struct SymTensor {
  llvm::SmallVector<int64_t> shape;
  mlir::Type elementType;
  std::function<z3::expr(llvm::ArrayRef<z3::expr>)> at;
  /// Structural identity: equal ids compute the same function (the same op
  /// and attributes over operands of equal ids), so an op cloned into a
  /// fusion group keys the same uninterpreted function as the original.
  unsigned id = 0;
  int64_t numElements() const;
};

/// A free tensor: its name and encoding, for counterexamples.
struct FreeTensor {
  std::string name;
  const SymTensor *tensor;
  mlir::Value value;
};

class Encoder {
public:
  Encoder(z3::context &ctx, Arithmetic arithmetic);

  /// Ops to encode through; the results of others are free tensors.
  void setExpandable(std::function<bool(mlir::Operation *)> expandable) {
    expandable_ = std::move(expandable);
  }

  /// The encoding of `v`, or null with `reason()` set (a dynamic shape, an
  /// element type without a sort, a reduction too large to unroll).
  const SymTensor *encode(mlir::Value v);

  /// Makes `v` encode as `t` (the validator's symbolic stand-in for a
  /// constant a pass computed numerically).
  void bind(mlir::Value v, const SymTensor *t) { memo_[v] = t; }

  /// A tensor of `type` defined by `at`; `key` names its structure.
  const SymTensor *makeTensor(mlir::Type type, const std::string &key,
                              std::function<z3::expr(llvm::ArrayRef<z3::expr>)> at);

  /// x / y in this arithmetic (real: x * (1 / y)), sqrt, numerals.
  z3::expr divide(const z3::expr &x, const z3::expr &y);
  z3::expr squareRoot(const z3::expr &x);
  z3::expr numeral(double value, const z3::sort &sort);

  const std::string &reason() const { return reason_; }
  /// Facts the encoded functions need (the Real arithmetic's axioms).
  const std::vector<z3::expr> &axioms() const { return axioms_; }
  const std::vector<FreeTensor> &freeTensors() const { return free_; }

  z3::context &context() { return ctx_; }
  Arithmetic arithmetic() const { return arithmetic_; }

  /// The Z3 sort of an element type, or failure for unsupported types.
  std::optional<z3::sort> sortOf(mlir::Type elementType);
  /// Whether two elements are the same (IEEE: identical values, all NaNs equal).
  z3::expr same(const z3::expr &a, const z3::expr &b);

  /// Largest reduction (elements folded into one output) that is unrolled.
  static constexpr int64_t kMaxReduction = 64;
  /// Largest non-splat constant encoded element by element.
  static constexpr int64_t kMaxConstant = 256;
  /// Most trips of a loop unrolled into the encoding.
  static constexpr int64_t kMaxTrips = 16;

  /// Why the encoding left the results of `loop` (an scf.while) free: its
  /// trip count is not decided by constants, ...; null when it unrolled it.
  const std::string *whyLoopFree(mlir::Operation *loop) const {
    auto it = freeLoops_.find(loop);
    return it == freeLoops_.end() ? nullptr : &it->second;
  }

private:
  const SymTensor *encodeOp(mlir::Operation *op, unsigned resultIndex);
  /// An scf.while whose trip count the encoding decides, unrolled; null
  /// with `reason()` otherwise.
  const SymTensor *encodeLoop(mlir::Operation *loop, unsigned resultIndex);
  const SymTensor *freeTensor(mlir::Value v, const std::string &name);
  const SymTensor *uninterpreted(mlir::Operation *op, unsigned resultIndex,
                                 llvm::ArrayRef<const SymTensor *> operands);
  SymTensor *make(mlir::Type type, const std::string &key);
  unsigned intern(const std::string &key);
  const SymTensor *fail(const llvm::Twine &why);

  z3::context &ctx_;
  Arithmetic arithmetic_;
  std::function<bool(mlir::Operation *)> expandable_;
  std::deque<SymTensor> tensors_;
  llvm::DenseMap<mlir::Value, const SymTensor *> memo_;
  std::map<std::string, z3::func_decl> functions_;
  std::map<std::string, unsigned> keys_;
  std::vector<z3::expr> axioms_;
  std::vector<FreeTensor> free_;
  std::string reason_;
  llvm::DenseMap<mlir::Operation *, std::string> freeLoops_;
  unsigned nextId_ = 1;

  friend struct ScalarOps;
};

/// Prints an element term a model gave a value to ("1.5", "-0.0", "nan", "7", "true").
std::string formatValue(const z3::expr &value);

} // namespace cuvil::verify

#endif
