//===- ActivationOps.td - cuvil.act.* activation functions -*- tablegen -*-===//
//
// Element-wise activations and the softmax family. All keep their operand's
// type; the transcendental ones need floating-point operands.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_ACTIVATIONOPS_TD
#define CUVIL_DIALECT_CUVIL_IR_ACTIVATIONOPS_TD

include "dialects/Cuvil/IR/CuvilBase.td"

def Cuvil_ReluOp : Cuvil_UnaryOp<"act.relu", "Numeric"> {
  let summary = "Rectified linear unit: max(x, 0).";
  let description = [{
    `torch.relu`. NaN stays NaN. Works on integer tensors as PyTorch does.

    ```mlir
    %y = cuvil.act.relu %x : tensor<1x64x56x56xf32>
    ```
  }];
  let hasFolder = 1;
}

def Cuvil_HardtanhOp : Cuvil_UnaryOp<"act.hardtanh", "Numeric",
    (ins DefaultValuedAttr<F64Attr, "-1.0">:$min_val,
         DefaultValuedAttr<F64Attr, "1.0">:$max_val), [],
    [{
      if (getMinVal().convertToDouble() > getMaxVal().convertToDouble())
        return emitError() << "min_val (" << getMinVal().convertToDouble()
                           << ") must not exceed max_val ("
                           << getMaxVal().convertToDouble() << ")";
    }]> {
  let summary = "Clamps to [min_val, max_val]; ReLU6 is min 0, max 6.";
  let description = [{
    `torch.nn.functional.hardtanh` and `relu6`: `min(max(x, min_val), max_val)`.

    ```mlir
    %y = cuvil.act.hardtanh %x {min_val = 0.0 : f64, max_val = 6.0 : f64} : tensor<1x32x112x112xf32>
    ```
  }];
}

def Cuvil_LeakyReluOp : Cuvil_UnaryOp<"act.leaky_relu", "Float",
    (ins DefaultValuedAttr<F64Attr, "0.01">:$negative_slope)> {
  let summary = "x if x >= 0 else negative_slope * x.";
  let description = [{
    ```mlir
    %y = cuvil.act.leaky_relu %x {negative_slope = 2.000000e-01 : f64} : tensor<4x8xf32>
    ```
  }];
}

def Cuvil_EluOp : Cuvil_UnaryOp<"act.elu", "Float",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$alpha)> {
  let summary = "Exponential linear unit: x if x > 0 else alpha * (exp(x) - 1).";
  let description = [{
    ```mlir
    %y = cuvil.act.elu %x {alpha = 1.0 : f64} : tensor<4x8xf32>
    ```
  }];
}

def Cuvil_GeluOp : Cuvil_UnaryOp<"act.gelu", "Float",
    (ins DefaultValuedAttr<Cuvil_GeluApproximationAttr,
                           "::mlir::cuvil::GeluApproximation::None">:$approximate)> {
  let summary = "Gaussian error linear unit, exact (erf) or tanh-approximated.";
  let description = [{
    `approximate = none`: `x * 0.5 * (1 + erf(x / sqrt(2)))`;
    `approximate = tanh`: `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`.

    ```mlir
    %y = cuvil.act.gelu %x {approximate = #cuvil<gelu_approximation tanh>} : tensor<2x128x256xf32>
    ```
  }];
}

def Cuvil_SiluOp : Cuvil_UnaryOp<"act.silu", "Float"> {
  let summary = "Sigmoid linear unit (swish): x * sigmoid(x).";
  let description = [{
    ```mlir
    %y = cuvil.act.silu %x : tensor<1x32x56x56xf32>
    ```
  }];
}

def Cuvil_SigmoidOp : Cuvil_UnaryOp<"act.sigmoid", "Float"> {
  let summary = "Logistic sigmoid: 1 / (1 + exp(-x)).";
  let description = [{
    ```mlir
    %y = cuvil.act.sigmoid %x : tensor<8xf32>
    ```
  }];
}

def Cuvil_TanhOp : Cuvil_UnaryOp<"act.tanh", "Float"> {
  let summary = "Hyperbolic tangent.";
  let description = [{
    ```mlir
    %y = cuvil.act.tanh %x : tensor<8xf32>
    ```
  }];
}

def Cuvil_HardswishOp : Cuvil_UnaryOp<"act.hardswish", "Float"> {
  let summary = "x * relu6(x + 3) / 6.";
  let description = [{
    ```mlir
    %y = cuvil.act.hardswish %x : tensor<1x16x112x112xf32>
    ```
  }];
}

def Cuvil_HardsigmoidOp : Cuvil_UnaryOp<"act.hardsigmoid", "Float"> {
  let summary = "relu6(x + 3) / 6.";
  let description = [{
    ```mlir
    %y = cuvil.act.hardsigmoid %x : tensor<1x16x1x1xf32>
    ```
  }];
}

def Cuvil_SoftplusOp : Cuvil_UnaryOp<"act.softplus", "Float",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$beta,
         DefaultValuedAttr<F64Attr, "20.0">:$threshold), [],
    [{
      if (getBeta().convertToDouble() == 0.0)
        return emitError() << "beta must be non-zero";
    }]> {
  let summary = "log(1 + exp(beta * x)) / beta, linear above the threshold.";
  let description = [{
    Returns `x` where `beta * x > threshold`, as PyTorch does.

    ```mlir
    %y = cuvil.act.softplus %x {beta = 1.0 : f64, threshold = 20.0 : f64} : tensor<8xf32>
    ```
  }];
}

def Cuvil_MishOp : Cuvil_UnaryOp<"act.mish", "Float"> {
  let summary = "x * tanh(softplus(x)).";
  let description = [{
    ```mlir
    %y = cuvil.act.mish %x : tensor<8xf32>
    ```
  }];
}

def Cuvil_SoftmaxOp : Cuvil_UnaryOp<"act.softmax", "Float", (ins I64Attr:$dim), [],
    [{
      if (::mlir::failed(::mlir::cuvil::checkDim(getDim(), rank, "dim", emitError)))
        return ::mlir::failure();
    }], /*elementwise=*/0> {
  let summary = "exp(x) / sum(exp(x)) along `dim`, computed stably.";
  let description = [{
    `dim` is normalised (`0 <= dim < rank`). A 0-d operand is allowed with
    `dim = 0`, as in PyTorch (the result is 1).

    ```mlir
    %p = cuvil.act.softmax %logits {dim = 1 : i64} : tensor<8x1000xf32>
    ```
  }];
}

def Cuvil_LogSoftmaxOp : Cuvil_UnaryOp<"act.log_softmax", "Float", (ins I64Attr:$dim), [],
    [{
      if (::mlir::failed(::mlir::cuvil::checkDim(getDim(), rank, "dim", emitError)))
        return ::mlir::failure();
    }], /*elementwise=*/0> {
  let summary = "x - log(sum(exp(x))) along `dim`, computed stably.";
  let description = [{
    ```mlir
    %p = cuvil.act.log_softmax %logits {dim = 1 : i64} : tensor<8x10xf32>
    ```
  }];
}

#endif // CUVIL_DIALECT_CUVIL_IR_ACTIVATIONOPS_TD
