//===- MathOps.td - cuvil.math.* element-wise arithmetic -*- tablegen -*-===//
//
// Unary math keeps its operand's type; transcendental functions need
// floating-point operands (the importer casts integers to f32 first, as
// PyTorch promotes them). Binary ops broadcast and promote their operands
// with PyTorch's result_type rules: 0-d operands take part with a lower
// priority than operands with dimensions.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_MATHOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_MATHOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

// A unary math op whose description is just its formula.
class Cuvil_MathUnaryOp<string name, string kind, string formula,
                        list<Trait> traits = []>
    : Cuvil_UnaryOp<"math." # name, kind, (ins), traits> {
  let summary = "Element-wise " # formula # ".";
  let description = "Element-wise `" # formula # "`, with PyTorch's "
      # "semantics for NaN, infinities and signed zeros.\n\n"
      # "```mlir\n%y = cuvil.math." # name # " %x : tensor<2x3xf32>\n```";
}

def Cuvil_NegOp : Cuvil_MathUnaryOp<"neg", "Numeric", "-x"> { let hasFolder = 1; }
def Cuvil_AbsOp : Cuvil_MathUnaryOp<"abs", "Numeric", "|x|">;
def Cuvil_SignOp : Cuvil_MathUnaryOp<"sign", "Numeric", "sign(x) in {-1, 0, 1}">;
def Cuvil_ExpOp : Cuvil_MathUnaryOp<"exp", "Float", "exp(x)">;
def Cuvil_Expm1Op : Cuvil_MathUnaryOp<"expm1", "Float", "exp(x) - 1">;
def Cuvil_LogOp : Cuvil_MathUnaryOp<"log", "Float", "natural logarithm log(x)">;
def Cuvil_Log1pOp : Cuvil_MathUnaryOp<"log1p", "Float", "log(1 + x)">;
def Cuvil_SqrtOp : Cuvil_MathUnaryOp<"sqrt", "Float", "square root sqrt(x)">;
def Cuvil_RsqrtOp : Cuvil_MathUnaryOp<"rsqrt", "Float", "1 / sqrt(x)">;
def Cuvil_ReciprocalOp : Cuvil_MathUnaryOp<"reciprocal", "Float", "1 / x">;
def Cuvil_SinOp : Cuvil_MathUnaryOp<"sin", "Float", "sine sin(x)">;
def Cuvil_CosOp : Cuvil_MathUnaryOp<"cos", "Float", "cosine cos(x)">;
def Cuvil_ErfOp : Cuvil_MathUnaryOp<"erf", "Float", "error function erf(x)">;
def Cuvil_FloorOp : Cuvil_MathUnaryOp<"floor", "Float", "floor(x)">;
def Cuvil_CeilOp : Cuvil_MathUnaryOp<"ceil", "Float", "ceil(x)">;
def Cuvil_RoundOp : Cuvil_MathUnaryOp<"round", "Float",
                                      "round half to even (torch.round)">;
def Cuvil_TanOp : Cuvil_MathUnaryOp<"tan", "Float", "tangent tan(x)">;
def Cuvil_AsinOp : Cuvil_MathUnaryOp<"asin", "Float", "arcsine asin(x)">;
def Cuvil_AcosOp : Cuvil_MathUnaryOp<"acos", "Float", "arccosine acos(x)">;
def Cuvil_AtanOp : Cuvil_MathUnaryOp<"atan", "Float", "arctangent atan(x)">;
def Cuvil_SinhOp : Cuvil_MathUnaryOp<"sinh", "Float", "hyperbolic sine sinh(x)">;
def Cuvil_CoshOp : Cuvil_MathUnaryOp<"cosh", "Float", "hyperbolic cosine cosh(x)">;
def Cuvil_AsinhOp : Cuvil_MathUnaryOp<"asinh", "Float", "inverse hyperbolic sine asinh(x)">;
def Cuvil_AcoshOp : Cuvil_MathUnaryOp<"acosh", "Float", "inverse hyperbolic cosine acosh(x)">;
def Cuvil_AtanhOp : Cuvil_MathUnaryOp<"atanh", "Float", "inverse hyperbolic tangent atanh(x)">;
def Cuvil_Log2Op : Cuvil_MathUnaryOp<"log2", "Float", "base-2 logarithm log2(x)">;
def Cuvil_Log10Op : Cuvil_MathUnaryOp<"log10", "Float", "base-10 logarithm log10(x)">;
def Cuvil_Exp2Op : Cuvil_MathUnaryOp<"exp2", "Float", "2^x">;
def Cuvil_ErfcOp : Cuvil_MathUnaryOp<"erfc", "Float", "complementary error function 1 - erf(x)">;

def Cuvil_SpecialOp : Cuvil_UnaryOp<"math.special", "Float", (ins StrAttr:$function), [], [{
      if (!::mlir::cuvil::isSpecialFunction(getFunction(), 1))
        return emitOpError() << "'" << getFunction() << "' is not a one-argument special function";
  }]> {
  let summary = "Element-wise special function of torch.special (digamma, Bessel, ...).";
  let description = [{
    `function` names one of the runtime's special functions of one argument
    (dialects/Cuvil/IR/SpecialFunctions.h: digamma, erfinv, erfcx, ndtr,
    ndtri, log_ndtr, entr, i0, i0e, i1, i1e, the Bessel functions j0, j1,
    y0, y1, the modified ones i0, i1, k0, k1 and scaled k0, k1,
    spherical_bessel_j0, airy_ai), computed in double precision with
    PyTorch's algorithms and rounded to the element type.

    ```mlir
    %y = cuvil.math.special %x {function = "digamma"} : tensor<4xf32>
    ```
  }];
  let assemblyFormat = "$input attr-dict `:` type($input)";
}
def Cuvil_LgammaOp : Cuvil_MathUnaryOp<"lgamma", "Float", "log |Gamma(x)|">;
def Cuvil_TruncOp : Cuvil_MathUnaryOp<"trunc", "Float", "x rounded toward zero">;
def Cuvil_BitwiseNotOp : Cuvil_MathUnaryOp<"bitwise_not", "IntegerOrBool",
                                           "~x (logical not for i1)">;

def Cuvil_ClampOp : Cuvil_UnaryOp<"math.clamp", "Numeric",
    (ins OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max), [],
    [{
      if (!getMin() && !getMax())
        return emitError() << "needs at least one of 'min' and 'max'";
    }]> {
  let summary = "Clamps to [min, max]; either bound may be absent.";
  let description = [{
    `torch.clamp` with scalar bounds: `min(max(x, min), max)`. When
    `min > max` every element becomes `max`, as in PyTorch. Bounds are
    converted to the operand's element type first (for integer tensors the
    importer only emits integral bounds).

    ```mlir
    %y = cuvil.math.clamp %x {min = 0.0 : f64, max = 1.0 : f64} : tensor<4xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Binary arithmetic
//===----------------------------------------------------------------------===//

class Cuvil_MathBinaryOp<string name, string formula, string kind = "Any",
                         dag attrs = (ins), string rule = "Promote">
    : Cuvil_BinaryOp<"math." # name, kind, rule, attrs> {
  let summary = "Element-wise " # formula # " with broadcasting and type promotion.";
  let description = "Element-wise `" # formula # "`. Shapes broadcast as in "
      # "NumPy; the result element type is PyTorch's `result_type` of the "
      # "operands, which are converted to it before the operation.\n\n"
      # "```mlir\n%z = cuvil.math." # name
      # " %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>\n```";
}

def Cuvil_AddOp : Cuvil_MathBinaryOp<"add", "lhs + rhs"> { let hasFolder = 1; }
def Cuvil_SubOp : Cuvil_MathBinaryOp<"sub", "lhs - rhs", "Numeric"> { let hasFolder = 1; }
def Cuvil_MulOp : Cuvil_MathBinaryOp<"mul", "lhs * rhs"> { let hasFolder = 1; }
def Cuvil_DivOp : Cuvil_MathBinaryOp<"div", "lhs / rhs", "Any",
    (ins DefaultValuedAttr<Cuvil_RoundingModeAttr,
                           "::mlir::cuvil::RoundingMode::None">:$rounding_mode),
    "Promote"> {
  // The rounding mode decides the result type: see DivOp::inferResultTypes.
  let cuvilExtraDef = "";
  let description = [{
    `torch.div`. With `rounding_mode = none` this is true division and
    integer operands give an `f32` result; `trunc` and `floor` round the
    quotient and keep the promoted type. Integer division by zero is an
    error at run time.

    ```mlir
    %q = cuvil.math.div %x, %y {rounding_mode = #cuvil<rounding_mode floor>}
        : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
    ```
  }];
}
def Cuvil_PowOp : Cuvil_MathBinaryOp<"pow", "lhs ^ rhs"> {
  // x ^ 2 of a float tensor that keeps its type is x * x (PyTorch's own
  // kernel for a scalar exponent 2 does the same).
  let hasCanonicalizer = 1;
  let description = [{
    `torch.pow`. For integers a negative exponent gives 0, except for the
    bases 1 and -1 (PyTorch's integer power).

    ```mlir
    %z = cuvil.math.pow %x, %e : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    ```
  }];
}
def Cuvil_MaximumOp : Cuvil_MathBinaryOp<"maximum", "max(lhs, rhs), NaN-propagating">;
def Cuvil_MinimumOp : Cuvil_MathBinaryOp<"minimum", "min(lhs, rhs), NaN-propagating">;
def Cuvil_RemainderOp : Cuvil_MathBinaryOp<"remainder",
    "lhs - floor(lhs / rhs) * rhs (Python's %)">;
def Cuvil_FmodOp : Cuvil_MathBinaryOp<"fmod",
    "lhs - trunc(lhs / rhs) * rhs (C's fmod: the sign of lhs)">;
def Cuvil_Atan2Op : Cuvil_MathBinaryOp<"atan2", "atan2(lhs, rhs), the angle of (rhs, lhs)", "Float">;
def Cuvil_HypotOp : Cuvil_MathBinaryOp<"hypot", "sqrt(lhs^2 + rhs^2) without overflow", "Float">;
def Cuvil_CopysignOp : Cuvil_MathBinaryOp<"copysign", "|lhs| with the sign of rhs", "Float">;
def Cuvil_NextafterOp : Cuvil_MathBinaryOp<"nextafter",
    "the next float after lhs toward rhs", "Float">;
def Cuvil_Special2Op : Cuvil_MathBinaryOp<"special2",
    "a two-argument special function of torch.special", "Float", (ins StrAttr:$function)> {
  let description = [{
    `function` names one of the runtime's special functions of two
    arguments, in torch.special's order (polygamma(n, x), zeta(x, q),
    igamma(a, x), igammac(a, x), mvlgamma(x, p), and the orthogonal
    polynomials chebyshev_polynomial_t/u/v/w(x, n), their shifted forms,
    hermite_polynomial_h/he, laguerre_polynomial_l, legendre_polynomial_p),
    in double precision with PyTorch's algorithms. Shapes broadcast.

    ```mlir
    %y = cuvil.math.special2 %n, %x {function = "polygamma"} : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
    ```
  }];
  let cuvilVerifyExtra = [{
      if (!::mlir::cuvil::isSpecialFunction(getFunction(), 2))
        return emitOpError() << "'" << getFunction() << "' is not a two-argument special function";
  }];
}
def Cuvil_FmaxOp : Cuvil_MathBinaryOp<"fmax", "max(lhs, rhs), ignoring a NaN operand">;
def Cuvil_FminOp : Cuvil_MathBinaryOp<"fmin", "min(lhs, rhs), ignoring a NaN operand">;
def Cuvil_BitwiseAndOp : Cuvil_MathBinaryOp<"bitwise_and", "lhs & rhs", "IntegerOrBool">;
def Cuvil_BitwiseOrOp : Cuvil_MathBinaryOp<"bitwise_or", "lhs | rhs", "IntegerOrBool">;
def Cuvil_BitwiseXorOp : Cuvil_MathBinaryOp<"bitwise_xor", "lhs ^ rhs", "IntegerOrBool">;
// Shift amounts outside [0, width) are undefined in C++; PyTorch's result
// for them depends on its CPU code path. Cuvil gives 0 (left) and the sign
// (right), as PyTorch's vectorised int64 kernels do.
def Cuvil_ShiftLeftOp : Cuvil_MathBinaryOp<"shift_left",
    "lhs << rhs (0 once rhs reaches the width)", "IntegerOrBool">;
def Cuvil_ShiftRightOp : Cuvil_MathBinaryOp<"shift_right",
    "lhs >> rhs, arithmetic for signed types (sign once rhs reaches the width)", "IntegerOrBool">;

#endif // CUVIL_DIALECT_CUVIL_IR_MATHOPS_TD
