//===- Interpreter.h - Partial evaluation of TorchScript code ---*- C++ -*-===//
//
// Runs serialized TorchScript: calls are inlined, every non-tensor value is
// computed, branches with known conditions are taken (an untaken `raise`
// vanishes, a taken one is an import error quoting the model), and tensor
// operators become cuvil ops through the lowering table (Lowering.h).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_INTERPRETER_H
#define CUVIL_FRONTEND_TORCHSCRIPT_INTERPRETER_H

#include "frontend/torchscript/Archive.h"
#include "frontend/torchscript/Importer.h"
#include "frontend/torchscript/Schema.h"
#include "frontend/torchscript/Values.h"
#include "support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"

#include <functional>
#include <deque>
#include <map>
#include <stdexcept>

namespace cuvil::torchscript {

/// A fatal import error, thrown inside the evaluator and turned into an
/// Error at the API boundary. Never thrown through MLIR frames.
struct ImportError : std::runtime_error {
  explicit ImportError(const std::string &m) : std::runtime_error(m) {}
};

/// Stops the evaluation when it cannot go on without a value it does not
/// have (control flow on an unsupported result); the unsupported items
/// collected so far explain why.
struct StopImport : std::runtime_error {
  StopImport() : std::runtime_error("evaluation stopped at an unsupported construct") {}
};

/// Thrown by a `raise` reached while tracing a branch that depends on tensor
/// data: the branch becomes a run-time assertion on the condition.
struct BranchRaises {
  std::string message; ///< "ExceptionClass: text"
};

/// Arguments of an operator call bound to its schema (defaults filled).
class BoundArgs {
public:
  const Schema *schema = nullptr;
  std::vector<IValue> values;

  const IValue &get(const std::string &name) const;
  bool has(const std::string &name) const;
};

/// Binds a call of operator `name` to the first of its schemas it fits.
bool bindOperatorArgs(const std::string &name, const std::vector<IValue> &args,
                      const std::vector<std::pair<std::string, IValue>> &kwargs, BoundArgs &out);

class Interpreter;
/// Translates one operator call. Returns the result (a Tuple for several).
using OpHandler = std::function<IValue(Interpreter &, const BoundArgs &)>;

/// The operator table: aten/prim names to handlers (Builtins.cpp and
/// Lower*.cpp register into it).
std::map<std::string, OpHandler> &opHandlers();
/// Operators taking sizes known only at run time (torch.zeros(n, 4),
/// x.expand(n, -1), torch.arange(n), with n = x.size(1) of a '?'
/// dimension): tried when no schema takes the call because of a run-time
/// int. The arguments are bound with each run-time int standing in as 1,
/// then given back; the handler sees the run-time ints where they were.
std::map<std::string, OpHandler> &runTimeSizeHandlers();
void registerRunTimeSizeHandlers(std::map<std::string, OpHandler> &table);
void registerBuiltinHandlers(std::map<std::string, OpHandler> &table);
void registerTensorHandlers(std::map<std::string, OpHandler> &table);
void registerCompositeHandlers(std::map<std::string, OpHandler> &table);
void registerRecurrentHandlers(std::map<std::string, OpHandler> &table);
void registerMathHandlers(std::map<std::string, OpHandler> &table);
void registerIndexHandlers(std::map<std::string, OpHandler> &table);
void registerTensorOpHandlers(std::map<std::string, OpHandler> &table);
void registerSortHandlers(std::map<std::string, OpHandler> &table);
void registerLossHandlers(std::map<std::string, OpHandler> &table);
void registerLinalgOpHandlers(std::map<std::string, OpHandler> &table);
void registerFormulaOpHandlers(std::map<std::string, OpHandler> &table);
void registerPoolWindowOpHandlers(std::map<std::string, OpHandler> &table);
void registerSignalHandlers(std::map<std::string, OpHandler> &table);

/// A new tensor that is a view of `base` (reshape, transpose, slice, ...):
/// in-place writes to `base` recompute it (LowerOps.cpp).
IValue viewOf(const IValue &base, mlir::Value v);
/// The view ops between a view and its base, the last applied first;
/// nothing when the chain is not made of view ops (or is implausibly long).
std::optional<std::vector<mlir::Operation *>> viewChain(const TensorBox &view);
/// A tensor's strides in PyTorch's sense (elements), from the view ops that
/// made it out of its base; nothing when a size is dynamic.
std::optional<std::vector<int64_t>> tensorStrides(const IValue &t);
/// Whether PyTorch would hold the tensor contiguously (is_contiguous()).
bool isContiguousLayout(const IValue &t);

class Interpreter {
public:
  Interpreter(TorchScriptArchive &archive, mlir::MLIRContext &ctx,
              mlir::func::FuncOp func);

  // Evaluation -------------------------------------------------------------
  /// Calls a callable value with positional and keyword arguments.
  IValue call(const IValue &callee, std::vector<IValue> args,
              std::vector<std::pair<std::string, IValue>> kwargs);
  /// Calls `name` ("aten::add") through its schema and handler.
  IValue callOperator(const std::string &name, std::vector<IValue> args,
                      std::vector<std::pair<std::string, IValue>> kwargs);
  IValue getAttr(const IValue &base, const std::string &name);
  /// `Cls.__new__(Cls)`: an instance of TorchScript class `type` (a Type
  /// value naming it) with no attributes set yet.
  IValue newObject(const IValue &type);
  /// The root module from data.pkl.
  IValue rootModule();
  /// Truth value of a concrete value; poison and tensors are reported.
  bool truthy(const IValue &v);
  /// Python's binary and comparison operators (tensors go to aten ops).
  IValue binaryOp(const std::string &op, const IValue &a, const IValue &b);
  IValue compareOp(const std::string &op, const IValue &a, const IValue &b);

  // Errors and reporting ---------------------------------------------------
  [[noreturn]] void fail(const std::string &code, const std::string &msg);
  /// Records an unsupported operator/construct at the current site and
  /// returns poison, so that the import goes on to find the others.
  IValue unsupported(const std::string &what);
  void warn(const std::string &msg);
  /// True while tracing a branch whose condition depends on tensor data.
  bool inTensorBranch() const { return tensorIfDepth_ > 0; }
  const std::vector<UnsupportedItem> &unsupportedItems() const { return unsupported_; }
  const std::vector<std::string> &warnings() const { return warnings_; }
  /// "code/__torch__/x.py:3:5 (model.py:12)" for the current site.
  std::string siteDescription();

  // IR building ------------------------------------------------------------
  mlir::MLIRContext *context() { return ctx_; }
  mlir::OpBuilder &builder() { return builder_; }
  /// The location of the current site, with inlined callers as call sites.
  mlir::Location location();
  /// A tensor constant for weights and buffers (cached per pickled tensor).
  IValue weight(const PValue &tensor, bool fromConstants, const std::string &name);
  /// A 0-d constant of `dtype` holding `v` (int, float or bool).
  mlir::Value scalarConstant(const IValue &v, DType dtype);
  /// The value of a small tensor computed from constants only (traced
  /// models compute sizes as tensors: NumToTensor, arithmetic, Int), by the
  /// reference evaluator; nothing when it depends on an input or is large.
  std::optional<Tensor> foldToConstant(mlir::Value v);

  /// Builds a cuvil op whose result types come from its own shape rule. A
  /// rule violation becomes an import error naming the op and the site.
  template <typename OpTy, typename... Args>
  mlir::Value build(Args &&...args) {
    auto op = builder_.create<OpTy>(location(), builder_.getNoneType(),
                                    std::forward<Args>(args)...);
    return finishBuild(op.getOperation());
  }
  mlir::Value finishBuild(mlir::Operation *op);

  mlir::func::FuncOp function() { return func_; }
  /// "onednn" or "qnnpack": the arithmetic quantized ops reproduce.
  void setQuantizedEngine(std::string engine) { quantizedEngine_ = std::move(engine); }
  const std::string &quantizedEngine() const { return quantizedEngine_; }

private:
  friend class FrameScope;
  struct Frame {
    std::map<std::string, IValue> locals;
    const SourceFile *file = nullptr;
    const Expr *site = nullptr; ///< the expression being evaluated
  };
  enum class Flow { Normal, Return, Break, Continue };

  IValue callFunction(const FuncDef *fn, const SourceFile *file,
                      const IValue *self, std::vector<IValue> args,
                      std::vector<std::pair<std::string, IValue>> kwargs);
  Flow exec(const std::vector<Stmt *> &body, IValue &ret);
  Flow execStmt(const Stmt *s, IValue &ret);
  /// An `if` whose condition is tensor data: both branches are traced into
  /// an scf.if, and what they change becomes its results.
  Flow execTensorIf(const Stmt *s, const IValue &cond, IValue &ret);
  /// A `while` whose condition is tensor data: scf.while carrying the
  /// variables the body assigns (Python numbers as 0-d tensors) and the
  /// tensors it may change in place.
  /// `for target in range(start, stop, step)` with a run-time stop (or
  /// start): the counter is carried too, and `step`'s sign is known.
  struct RunTimeRange {
    IValue start, stop;
    int64_t step = 1;
  };
  Flow execTensorWhile(const Stmt *s, IValue &ret, const RunTimeRange *range = nullptr);
  /// A Python bool, int or float as the 0-d tensor a run-time one is.
  IValue asRunTimeScalar(const IValue &v);
  /// The `if` condition / `while` condition tensor as an i1 scalar.
  mlir::Value conditionFlag(mlir::Value condition);
  IValue eval(const Expr *e);
  void assign(const Expr *target, const IValue &v);
  IValue lookup(const std::string &name);
  IValue subscript(const IValue &base, const Expr *indexExpr);
  IValue resolveQualified(const std::string &path);
  IValue fromPickle(const PValue *v, const std::string &path, int depth);
  IValue objectFor(const PValue *obj, const std::string &path);
  /// A torch.classes.quantized packed-parameter object from its pickled
  /// state (frozen models hold them as constants).
  IValue packedParamsFor(const PValue *obj, const std::string &path);
  IValue cellParamsFor(const PValue *obj, const std::string &path);
  /// Reads a small pickled tensor (per-channel scales) as doubles.
  std::vector<double> tensorValues(const PValue &t, bool fromConstants, const std::string &what);
  bool isInstance(const IValue &v, const Expr *type);
  std::vector<IValue> iterate(const IValue &v);
  mlir::Location locationOf(const Frame &f);

  TorchScriptArchive &archive_;
  mlir::MLIRContext *ctx_;
  mlir::func::FuncOp func_;
  mlir::OpBuilder builder_;
  mlir::OpBuilder constants_; ///< inserts weights at the top of the function
  mlir::Operation *lastWeight_ = nullptr; ///< the last weight constants_ made
  /// A deque: a frame keeps its address while calls push and pop others
  /// (data-dependent if and while hold a reference across the calls of
  /// their bodies).
  std::deque<Frame> frames_;
  std::map<const PValue *, IValue> weights_;
  std::map<const PValue *, std::shared_ptr<ObjectInst>> objects_;
  std::vector<UnsupportedItem> unsupported_;
  std::vector<std::string> warnings_;
  int64_t loopBudget_ = 10'000'000;
  std::string quantizedEngine_ = "onednn";
  int tensorIfDepth_ = 0; ///< > 0 while tracing a data-dependent branch
  size_t ifFrameDepth_ = 0; ///< frame depth of the innermost such branch
};

/// Dtype codes of TorchScript's ScalarType ints.
std::optional<DType> dtypeFromScalarType(int64_t code);
int64_t scalarTypeFromDType(DType d);

/// Quantized tensors (LowerQuantized.cpp). A tensor of `storage`'s
/// integers with `params` (#cuvil.quant): its real values dequantized.
IValue makeQuantized(Interpreter &in, mlir::Value storage, mlir::Attribute params);
/// `real` quantized with `params` into `storage` (ui8, i8, i32).
IValue quantizeTo(Interpreter &in, mlir::Value real, mlir::Attribute params, mlir::Type storage);
/// A packed-parameter object (torch.classes.quantized.*PackedParamsBase).
IValue makePackedParams(Interpreter &in, const std::string &kind, const IValue &weight,
                        const IValue &bias, std::vector<int64_t> stride,
                        std::vector<int64_t> padding, std::vector<int64_t> dilation,
                        std::vector<int64_t> outputPadding, int64_t groups, bool transposed);
/// quantized::linear_dynamic on the float tensor `x` ([..., K]) with the
/// packed weights `packed` (a LinearPackedParamsBase object): the layer
/// quantizes its input by its own range on every call, with the engine's
/// arithmetic; the float result [..., N] (poison when unsupported). `op`
/// names the caller in errors.
IValue dynamicQuantizedLinear(Interpreter &in, mlir::Value x, const IValue &packed, bool reduceRange,
                                   bool relu, const std::string &op);
/// A torch.classes.rnn.CellParamsBase of a dynamically quantized LSTM/GRU
/// layer: its two packed projections and reduce_range.
IValue makeDynamicCellParams(Interpreter &in, const IValue &packedIh, const IValue &packedHh,
                             bool reduceRange);
/// aten ops given quantized tensors: computed on their real values, the
/// result quantized by the op's rule; `handled` false when no quantized
/// tensor takes part. Ops without a rule are reported as unsupported.
IValue lowerOnQuantized(Interpreter &in, const std::string &name, std::vector<IValue> &args,
                        std::vector<std::pair<std::string, IValue>> &kwargs, bool &handled);
void registerQuantizedHandlers(std::map<std::string, OpHandler> &table);

/// Complex tensors (LowerComplex.cpp): whether a bound call makes or takes
/// one, and its translation.
bool needsComplexLowering(const std::string &name, const BoundArgs &b);
IValue lowerComplexOperator(Interpreter &in, const std::string &name, const BoundArgs &b);

} // namespace cuvil::torchscript

#endif // CUVIL_FRONTEND_TORCHSCRIPT_INTERPRETER_H
