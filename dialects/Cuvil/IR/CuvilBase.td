//===- CuvilBase.td - The cuvil dialect, its types and op classes -*- tablegen -*-===//
//
// Everything the op families share: the dialect, tensor type constraints, the
// enums, and the base classes. Every op computes its result types in one
// static function, `inferResultTypes`, which is used by the verifier (with the
// op's own error messages), by InferTypeOpInterface (builders, shape
// propagation) and is the single statement of the op's shape rules.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_CUVILBASE_TD
#define CUVIL_DIALECT_CUVIL_IR_CUVILBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def Cuvil_Dialect : Dialect {
  let name = "cuvil";
  let cppNamespace = "::mlir::cuvil";
  let summary = "Cuvil's graph dialect: tensor ops with PyTorch semantics.";
  let description = [{
    The `cuvil` dialect holds imported models as a graph of typed tensor ops
    whose semantics are PyTorch's (broadcasting, type promotion, NCHW layouts,
    eval-mode normalisation). Ops are grouped in families whose names prefix
    the mnemonic: `cuvil.act.*` activations, `cuvil.math.*` element-wise
    arithmetic, `cuvil.logic.*` comparisons and selection, `cuvil.gemm.*`
    matrix products, `cuvil.conv.*` convolutions, `cuvil.norm.*`
    normalisation, `cuvil.pool.*` pooling, `cuvil.reduce.*` reductions,
    `cuvil.shape.*` views and layout changes, `cuvil.tensor.*` data movement
    and casts, plus `cuvil.constant`.

    Conventions shared by every op:
    * tensors are ranked; element types are `i1` (bool), `ui8`, `i8`, `i16`,
      `i32`, `i64`, `f16`, `bf16`, `f32` and `f64`;
    * dimension attributes are normalised: `0 <= dim < rank` (the importer
      resolves PyTorch's negative dims);
    * dynamic dimensions (`?`) are allowed wherever the rule does not need
      the size, and compatible with any static size when a result type is
      checked against the inferred one.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  // `cuvil.kernel` on an op must be a #cuvil.kernel<...>.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// How the compiler made constants from the model's weights
    /// (WeightDerivations.h): one record per derived resource.
    ::mlir::cuvil::WeightDerivations &weightDerivations() { return *derivations_; }
  private:
    std::shared_ptr<::mlir::cuvil::WeightDerivations> derivations_;
  public:
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

class Cuvil_TensorOf<list<Type> allowed, string summary>
    : Type<RankedTensorOf<allowed>.predicate, summary, "::mlir::RankedTensorType">;

def Cuvil_Tensor : Cuvil_TensorOf<
    [I1, UI8, I8, I16, I32, I64, F16, BF16, F32, F64],
    "ranked tensor of i1/ui8/i8/i16/i32/i64/f16/bf16/f32/f64">;
def Cuvil_FloatTensor : Cuvil_TensorOf<[F16, BF16, F32, F64],
    "ranked floating-point tensor (cast integer tensors with cuvil.tensor.cast)">;
def Cuvil_IndexTensor : Cuvil_TensorOf<[I32, I64],
    "ranked tensor of i32 or i64 indices">;
def Cuvil_BoolTensor : Cuvil_TensorOf<[I1], "ranked tensor of i1">;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Cuvil_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU formulation", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Tanh", 1, "tanh">]> {
  let cppNamespace = "::mlir::cuvil";
  let genSpecializedAttr = 0;
}
def Cuvil_GeluApproximationAttr : EnumAttr<Cuvil_Dialect, Cuvil_GeluApproximation,
                                           "gelu_approximation">;

def Cuvil_RoundingMode : I32EnumAttr<"RoundingMode",
    "rounding of a division result", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Trunc", 1, "trunc">,
      I32EnumAttrCase<"Floor", 2, "floor">]> {
  let cppNamespace = "::mlir::cuvil";
  let genSpecializedAttr = 0;
}
def Cuvil_RoundingModeAttr : EnumAttr<Cuvil_Dialect, Cuvil_RoundingMode,
                                      "rounding_mode">;

def Cuvil_PadMode : I32EnumAttr<"PadMode", "how padding values are chosen", [
      I32EnumAttrCase<"Constant", 0, "constant">,
      I32EnumAttrCase<"Reflect", 1, "reflect">,
      I32EnumAttrCase<"Replicate", 2, "replicate">,
      I32EnumAttrCase<"Circular", 3, "circular">]> {
  let cppNamespace = "::mlir::cuvil";
  let genSpecializedAttr = 0;
}
def Cuvil_PadModeAttr : EnumAttr<Cuvil_Dialect, Cuvil_PadMode, "pad_mode">;

def Cuvil_ScatterReduce : I32EnumAttr<"ScatterReduce",
    "how a scattered value combines with the target element", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Sum", 1, "sum">,
      I32EnumAttrCase<"Prod", 2, "prod">,
      I32EnumAttrCase<"Mean", 3, "mean">,
      I32EnumAttrCase<"Amax", 4, "amax">,
      I32EnumAttrCase<"Amin", 5, "amin">]> {
  let cppNamespace = "::mlir::cuvil";
  let genSpecializedAttr = 0;
}
def Cuvil_ScatterReduceAttr : EnumAttr<Cuvil_Dialect, Cuvil_ScatterReduce, "scatter_reduce">;

def Cuvil_ScanKind : I32EnumAttr<"ScanKind", "what a cumulative op accumulates", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Prod", 1, "prod">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">,
      I32EnumAttrCase<"LogSumExp", 4, "logsumexp">]> {
  let cppNamespace = "::mlir::cuvil";
  let genSpecializedAttr = 0;
}
def Cuvil_ScanKindAttr : EnumAttr<Cuvil_Dialect, Cuvil_ScanKind, "scan_kind">;

def Cuvil_ResizeMode : I32EnumAttr<"ResizeMode", "how resized samples are computed", [
      I32EnumAttrCase<"Nearest", 0, "nearest">,
      I32EnumAttrCase<"NearestExact", 1, "nearest_exact">,
      I32EnumAttrCase<"Linear", 2, "linear">]> {
  let cppNamespace = "::mlir::cuvil";
  let genSpecializedAttr = 0;
}
def Cuvil_ResizeModeAttr : EnumAttr<Cuvil_Dialect, Cuvil_ResizeMode, "resize_mode">;

def Cuvil_FusionKind : I32EnumAttr<"FusionKind", "what a fusion group is built around", [
      I32EnumAttrCase<"Elementwise", 0, "elementwise">,
      I32EnumAttrCase<"Conv", 1, "conv">,
      I32EnumAttrCase<"Gemm", 2, "gemm">]> {
  let cppNamespace = "::mlir::cuvil";
  let genSpecializedAttr = 0;
}
def Cuvil_FusionKindAttr : EnumAttr<Cuvil_Dialect, Cuvil_FusionKind, "fusion_kind">;

//===----------------------------------------------------------------------===//
// Kernel configurations
//===----------------------------------------------------------------------===//

def Cuvil_KernelConfigAttr : AttrDef<Cuvil_Dialect, "KernelConfig"> {
  let mnemonic = "kernel";
  let summary = "The kernel code generation uses for one op, and why";
  let description = [{
    Kernel choices are data: a target's *choose* pass writes one
    `cuvil.kernel` attribute on every op it has kernels for (convolutions,
    linear layers, matrix products, pooling), from a configuration provider
    (the built-in heuristics today; a device profile or a tuning database
    later), and its *apply* pass builds the code the attribute names. An
    attribute already present is kept, so a configuration edited by hand in
    `cuvil-export --emit mlir`'s output is what the library is built with.

    ```mlir
    %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1]
           {cuvil.kernel = #cuvil.kernel<kernel = "conv2d", variant = "winograd_f4x4",
                                          source = "heuristics", reason = "196 4x4 tiles">}
    ```

    `kernel` and `variant` are the target's names (targets/CPU/KernelConfig.h
    lists the CPU's; `kernel = "linalg"` keeps the generic lowering);
    `source` says which provider chose, `reason` why (for reports);
    `schedule`, where the kernel takes one, fixes its work split (a tuned
    choice; without it the runtime plans the split itself).
  }];
  let parameters = (ins
    StringRefParameter<"kernel family, e.g. conv2d, linear, matmul, linalg">:$kernel,
    StringRefParameter<"variant within the family, e.g. im2col, winograd_f4x4", [{""}]>:$variant,
    StringRefParameter<"the provider that chose it: heuristics, user, tuning-db", [{"user"}]>:$source,
    StringRefParameter<"why it was chosen (reports)", [{""}]>:$reason,
    StringRefParameter<"the kernel's schedule: its work split (fine, whole, stream; empty: the runtime's plan)", [{""}]>:$schedule);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Quantization parameters
//===----------------------------------------------------------------------===//

// Scales printed so that they parse back to the same double (MLIR's own
// dense-array printer keeps 7 digits, and bytecode stores this attribute as
// its text): a scale rounded by one part in 10^7 moves PyTorch's roundings.
def Cuvil_ExactScalesParameter
    : AttrParameter<"::mlir::DenseF64ArrayAttr", "scales, > 0 and finite"> {
  let printer = [{ ::mlir::cuvil::printExactDoubles($_printer, $_self) }];
  let parser = [{ ::mlir::cuvil::parseExactDoubles($_parser) }];
}

def Cuvil_QuantParamsAttr : AttrDef<Cuvil_Dialect, "QuantParams"> {
  let mnemonic = "quant";
  let summary = "Affine quantization parameters: real = (q - zero_point) * scale";
  let description = [{
    Per tensor (`axis = -1`, one scale and one zero point) or per channel
    along `axis` (one of each per index of that dimension), as PyTorch's
    `per_tensor_affine` and `per_channel_affine` quantizers. The storage
    type (`i8`, `ui8`, `i32`) is the tensor's element type; the scales are
    kept in double as PyTorch keeps them.

    ```mlir
    #cuvil.quant<scale = [0.05], zero_point = [128]>
    #cuvil.quant<scale = [0.1, 0.2], zero_point = [0, 0], axis = 0>
    ```
  }];
  let parameters = (ins
    Cuvil_ExactScalesParameter:$scale,
    AttrParameter<"::mlir::DenseI64ArrayAttr", "zero points, one per scale">:$zero_point,
    DefaultValuedParameter<"int64_t", "-1", "the channel dimension, or -1 per tensor">:$axis);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isPerTensor() const { return getAxis() < 0; }
    /// The scale and zero point of channel `c` (0 per tensor).
    double scaleAt(int64_t c) const { return getScale()[isPerTensor() ? 0 : c]; }
    int64_t zeroPointAt(int64_t c) const { return getZeroPoint()[isPerTensor() ? 0 : c]; }
  }];
}

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

// Each result element depends only on the operand elements at the same
// (broadcast) position: what the fusion passes may chain into one loop nest.
def Cuvil_Elementwise : NativeOpTrait<"CuvilElementwise"> {
  let cppNamespace = "::mlir::cuvil";
}

//===----------------------------------------------------------------------===//
// Base op classes
//===----------------------------------------------------------------------===//

// Every cuvil op. With `inferTypes` (the default) result types come from
// `inferResultTypes`, shared by the verifier and InferTypeOpInterface; ops
// whose result type is a free choice (casts) set it to 0 and write verify()
// themselves. Ops add declarations and definitions through `cuvilExtraDecl` /
// `cuvilExtraDef` so that the shared ones are never lost.
class Cuvil_Op<string mnemonic, list<Trait> traits = [], bit inferTypes = 1>
    : Op<Cuvil_Dialect, mnemonic,
         !listconcat(traits, !if(inferTypes, [InferTypeOpAdaptorWithIsCompatible], []))> {
  code cuvilExtraDecl = "";
  code cuvilExtraDef = "";
  // Results must equal the inferred types exactly (ops whose assembly does
  // not print result types, so that printing and parsing round-trip).
  bit cuvilExactResultTypes = 0;
  // Extra checks on an existing op (attributes are populated), run by
  // verify() after inferResultTypes. Parsing may call inferResultTypes
  // before attributes are attached, so attribute-only rules belong here.
  code cuvilVerifyExtra = "";
  let hasVerifier = 1;
  let extraClassDeclaration = !if(inferTypes, [{
    /// Checks operands and attributes against the op's rules and computes
    /// its result types. Errors go through `emitError`.
    static ::llvm::LogicalResult inferResultTypes(Adaptor adaptor,
        ::mlir::cuvil::EmitErrorFn emitError,
        ::llvm::SmallVectorImpl<::mlir::Type> &types);
  }], "") # cuvilExtraDecl;
  let extraClassDefinition = !if(inferTypes, [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      auto emitError = [&]() {
        return ::mlir::cuvil::emitOptionalOpError(loc, getOperationName());
      };
      return inferResultTypes(adaptor, emitError, types);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      ::llvm::SmallVector<::mlir::Type> types;
      if (::mlir::failed(inferResultTypes(Adaptor(*this),
                                          [this]() { return emitOpError(); }, types)))
        return ::mlir::failure();
      }] # !if(cuvilExactResultTypes, [{
      if (::mlir::TypeRange(types) != getOperation()->getResultTypes())
        return emitOpError() << "result type " << getOperation()->getResultTypes()
                             << " must be " << ::mlir::TypeRange(types);
      }], [{
      // Checked here, before InferTypeOpInterface's own check, to report one
      // precise error instead of two generic ones.
      if (!::mlir::cuvil::areCompatibleResultTypes(types, getOperation()->getResultTypes()))
        return emitOpError() << "result type " << getOperation()->getResultTypes()
                             << " does not match the type its operands imply, "
                             << ::mlir::TypeRange(types);
      }]) # [{
      [[maybe_unused]] auto emitError = [this]() { return emitOpError(); };
      }] # cuvilVerifyExtra # [{
      return ::mlir::success();
    }
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                            ::mlir::TypeRange actual) {
      return ::mlir::cuvil::areCompatibleResultTypes(inferred, actual);
    }
  }], "") # cuvilExtraDef;
}

// Element-wise op with one operand and a result of exactly the same type
// (the assembly prints the operand type only).
// `kind` names a cuvil::ElementKind (Any, Numeric, Float, IntegerOrBool)
// that the operand's element type must satisfy; `check` is extra C++ run by
// the verifier on the op (with `rank` and `emitError` in scope).
class Cuvil_UnaryOp<string mnemonic, string kind, dag attrs = (ins),
                    list<Trait> traits = [], code check = "", bit elementwise = 1>
    : Cuvil_Op<mnemonic, !listconcat(traits, [Pure],
                                     !if(elementwise, [Cuvil_Elementwise], []))> {
  let arguments = !con((ins Cuvil_Tensor:$input), attrs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let cuvilExactResultTypes = 1;
  let cuvilExtraDef = [{
    ::llvm::LogicalResult $cppClass::inferResultTypes(Adaptor adaptor,
        ::mlir::cuvil::EmitErrorFn emitError,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      auto inputType = ::llvm::cast<::mlir::RankedTensorType>(adaptor.getInput().getType());
      if (::mlir::failed(::mlir::cuvil::checkElementKind(inputType,
              ::mlir::cuvil::ElementKind::}] # kind # [{, "operand", emitError)))
        return ::mlir::failure();
      types.push_back(inputType);
      return ::mlir::success();
    }
  }];
  let cuvilVerifyExtra = [{
      [[maybe_unused]] int64_t rank = getInput().getType().getRank();
  }] # check;
}

// Element-wise op with two broadcast operands. `resultRule` names a
// cuvil::BinaryResultRule: Promote (PyTorch result_type), Bool (comparisons
// and logical ops give i1), or a rule of its own.
class Cuvil_BinaryOp<string mnemonic, string kind, string resultRule,
                     dag attrs = (ins), list<Trait> traits = []>
    : Cuvil_Op<mnemonic, !listconcat(traits, [Pure, Cuvil_Elementwise])> {
  let arguments = !con((ins Cuvil_Tensor:$lhs, Cuvil_Tensor:$rhs), attrs);
  let results = (outs Cuvil_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let cuvilExtraDef = [{
    ::llvm::LogicalResult $cppClass::inferResultTypes(Adaptor adaptor,
        ::mlir::cuvil::EmitErrorFn emitError,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::mlir::cuvil::inferBinaryResult(adaptor.getLhs(), adaptor.getRhs(),
          ::mlir::cuvil::ElementKind::}] # kind # [{,
          ::mlir::cuvil::BinaryResultRule::}] # resultRule # [{, emitError, types);
    }
  }];
}

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILBASE_TD
