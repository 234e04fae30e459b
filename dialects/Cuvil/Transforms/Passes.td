//===- Passes.td - Graph-level passes on the cuvil dialect -*- tablegen -*-===//
#ifndef CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD
#define CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CuvilInferShapesPass : Pass<"cuvil-infer-shapes", "::mlir::func::FuncOp"> {
  let summary = "Refines dynamic result dimensions from the ops' shape rules.";
  let description = [{
    Walks the function in program order and re-infers every cuvil op's
    result types from its operands (InferTypeOpInterface). A dynamic (`?`)
    dimension that the rule can now compute becomes static; static sizes are
    never changed. Function results are updated to match what is returned.
    Uses that cannot take a refined type (ops of other dialects) get a
    `tensor.cast` back to the old type.

    A `cuvil.shape.reshape_dynamic` whose sizes can be computed from
    constants and static dimensions (`x.view(x.size(0), -1)` once the batch
    size is known) becomes a static `cuvil.shape.reshape`; one whose sizes
    depend on tensor values gets a remark at its source line, and the
    shapes after it stay dynamic.

    ```mlir
    // Before: %0 = cuvil.act.relu %arg0 : tensor<2x3xf32>   (result ?x3 elsewhere)
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numValueDependent", "num-value-dependent",
              "Reshapes whose shape depends on tensor values">,
  ];
}

def CuvilFoldConstantsPass : Pass<"cuvil-fold-constants", "::mlir::func::FuncOp"> {
  let summary = "Evaluates cuvil ops whose operands are all constants.";
  let description = [{
    Replaces a pure cuvil op whose operands are all `cuvil.constant` with the
    constant it computes, using the reference evaluator (so folding has
    exactly the semantics the tests check). Ops whose result would exceed
    `max-elements` (unless they only rearrange one constant's elements: a
    slice, reshape, permute or transpose no larger than its source, folded
    into a blob named after the source), or whose evaluation fails (e.g. an
    index out of range), are left alone. Constants left without users are
    erased.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"65536",
           "Largest result (in elements) that is folded">,
  ];
  let dependentDialects = ["::mlir::cuvil::CuvilDialect"];
}

def CuvilSimplifyPass : Pass<"cuvil-simplify", "::mlir::func::FuncOp"> {
  let summary = "Applies the cuvil ops' folders and canonicalization patterns, removing nothing else.";
  let description = [{
    Canonicalization for the graph pipeline: identities fold away (a
    same-dtype cast, a reshape to the same shape, an identity permutation,
    relu of relu, x + -0.0, ...), view chains collapse (reshape of
    reshape, permute of permute, squeeze/unsqueeze/flatten to reshape), and
    patterns rewrite ops, repeating until nothing changes. Unlike MLIR's
    `canonicalize`, it never erases an op just because its result is
    unused: dead code is `cuvil-dce`'s job, so switching that off keeps
    every op.
  }];
  let options = [
    Option<"maxIterations", "max-iterations", "int64_t", /*default=*/"10",
           "Sweeps over the function before giving up on a fixed point">,
  ];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Ops folded away">,
    Statistic<"numRewritten", "num-rewritten", "Patterns applied">,
  ];
}

def CuvilCanonicalizePass : Pass<"cuvil-canonicalize"> {
  let summary = "MLIR's canonicalization, with each rewrite of control flow checked.";
  let description = [{
    What `canonicalize` does (every loaded dialect's and op's patterns and
    folders, greedily, top-down), for the code generators after lowering:
    each pattern applied to an `scf.if`, `scf.for` or `scf.while` (a static
    condition, an if to a select, loop simplifications) is checked to keep
    the dependencies of the op's results (ControlDependencies.h), and a lost
    one fails the pass.
  }];
  let options = [
    Option<"testWrongIfConversion", "test-plant-wrong-if-conversion", "bool", /*default=*/"false",
           "Testing: also apply an if-conversion that keeps only the then-branch "
           "(a bug the check must catch)">,
  ];
}

def CuvilUnrollLoopsPass : Pass<"cuvil-unroll-loops", "::mlir::func::FuncOp"> {
  let summary = "Unrolls loops whose trip count is known at compile time.";
  let description = [{
    A `scf.while` as the importer writes loops (the condition computed in
    the before region from what the loop carries, the carried values passed
    on unchanged) whose condition depends only on constants and on carried
    values that start as constants and that the body updates from constants
    (a counter against a size that shape specialisation made static) is run
    at compile time, with the reference evaluator, to find its trip count.
    When the count is at most `max-trip-count` and the unrolled body at most
    `max-unrolled-ops` ops, the body is copied once per trip, each copy
    reading the values the one before yields, and the loop's results become
    the last copy's. The later passes then see straight-line code: the
    counters fold, and the trips' element-wise ops fuse.

    Every unrolled loop is checked trip by trip to keep the data
    dependencies of its body (ControlDependencies.h); a lost one fails the
    pass.

    ```mlir
    // Before: scf.while (%i = %c0, %h = %h0) { %go = cuvil.logic.lt %i, %c3 ... }
    //         do { %h2 = cuvil.act.tanh ...; %i2 = cuvil.math.add %i, %c1 ... }
    // After:  three copies of the body; the loop's results are the third's.
    ```
  }];
  let options = [
    Option<"maxTripCount", "max-trip-count", "int64_t", /*default=*/"16",
           "Loops with more trips stay loops">,
    Option<"maxUnrolledOps", "max-unrolled-ops", "int64_t", /*default=*/"4096",
           "Ops the unrolled copies may add, all trips together">,
    Option<"testDropCarried", "test-drop-carried", "bool", /*default=*/"false",
           "Testing: wire every trip to the loop's initial values instead of the "
           "trip before (a planted bug the flattening check must catch)">,
  ];
  let statistics = [
    Statistic<"numUnrolled", "num-unrolled", "Loops unrolled">,
  ];
}

def CuvilDecomposeConvTransposePass : Pass<"cuvil-decompose-conv-transpose", "::mlir::func::FuncOp"> {
  let summary = "Transposed convolutions whose kernel is their stride become 1x1 convolutions.";
  let description = [{
    A 2-D transposed convolution with kernel == stride, no padding, dilation
    or output padding, one group, static f32 shapes and constant weights
    (and bias) writes each input pixel's `kh x kw` output block from that
    pixel alone. It becomes a 1x1 convolution with `C_out * kh * kw` output
    channels (row `(co, a, b)` of the weights is `w[:, co, a, b]`, the bias
    repeated) and a depth-to-space reshuffle: `reshape` to
    `[N, C_out, kh, kw, H, W]`, `permute` to `[N, C_out, H, kh, W, kw]`,
    `reshape` to the output. The same products and sums; the convolution
    then runs on the GEMM kernels instead of a convolution over an input
    dilated with zeros.
  }];
  let statistics = [
    Statistic<"numDecomposed", "num-decomposed", "Transposed convolutions decomposed">,
  ];
  let dependentDialects = ["::mlir::cuvil::CuvilDialect"];
}

def CuvilFoldBatchNormPass : Pass<"cuvil-fold-batch-norm", "::mlir::func::FuncOp"> {
  let summary = "Folds eval-mode batch norm into the preceding conv/linear weights.";
  let description = [{
    With constant statistics, `batch_norm(x) = x * s + t` per channel, with
    `s = weight / sqrt(var + eps)` and `t = bias - mean * s`. When `x` is a
    convolution, transposed convolution or 2-D linear used only by the
    batch norm, with constant weight and bias, the producer is rebuilt with
    weight `W * s` (per output channel) and bias `b * s + t`, computed in
    f64 and rounded once. Any other batch norm with constant statistics
    becomes `x * s + t` with `[C, 1, ...]` constants (element-wise, so it
    fuses). Batch norms with non-constant statistics stay, with a remark
    when `remarks` is set.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Explain each batch norm that is not folded into weights">,
  ];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Batch norms folded into weights">,
    Statistic<"numScaleShift", "num-scale-shift", "Batch norms turned into scale and shift">,
  ];
  let dependentDialects = ["::mlir::cuvil::CuvilDialect"];
}

def CuvilFusePass : Pass<"cuvil-fuse", "::mlir::func::FuncOp"> {
  let summary = "Groups conv/GEMM epilogues and element-wise chains into cuvil.fused.group ops.";
  let description = [{
    In program order, every convolution and GEMM (linear, matmul,
    batch_matmul, addmm) takes the element-wise ops that follow it into one
    group (bias, scale, residual add, activation); then the remaining chains
    of element-wise ops form groups. An op joins a group only if it is legal:

    - the intermediate it consumes has no other user (it is never stored);
    - it is in the same block (no control-flow boundary);
    - it keeps the intermediate's type (no dtype change, no broadcast to a
      larger shape);
    - no other operand is a strided view (transpose, expand, inner slice),
      which the kernel would have to gather;
    - in a conv/GEMM group, no other operand shares storage with the
      anchor's inputs (the fused kernel may write its result in place of
      that operand while the anchor still reads it).

    With `remarks` (or `--cuvil-fusion-remarks`), each rejected candidate
    gets a remark at its source location naming the rule.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Explain every rejected fusion">,
  ];
  let statistics = [
    Statistic<"numGroups", "num-groups", "Fusion groups formed">,
    Statistic<"numFusedOps", "num-fused-ops", "Ops moved into groups">,
  ];
}

def CuvilGraphStatsPass : Pass<"cuvil-graph-stats", "::mlir::func::FuncOp"> {
  let summary = "Prints op counts (and fused-group patterns), before and after.";
  let description = [{
    Counts the ops of each function by name, fusion groups by kind and by
    pattern (`conv2d+add+relu`), and prints a table on stderr. With
    `record`, it only stores the counts on the function (attribute
    `cuvil.graph_stats`); the next printing run shows them as the `before`
    column and removes the attribute. The graph pipeline's `graph-stats`
    option records at its start and prints at its end.

    ```
    cuvil-opt model.mlir --cuvil-graph-stats=record=1 --cuvil-graph-optimize --cuvil-graph-stats
    ```
  }];
  let options = [
    Option<"record", "record", "bool", /*default=*/"false",
           "Store the counts for a later run instead of printing">,
  ];
}

def CuvilPlanMemoryPass : Pass<"cuvil-plan-memory", "::mlir::func::FuncOp"> {
  let summary = "Places every intermediate tensor in one arena, reusing dead buffers.";
  let description = [{
    Buffers and live ranges come from the alias-aware lifetime analysis
    (views share their root's buffer; inputs, constants and returned values
    are not in the arena). An element-wise op (or a fusion group through an
    epilogue operand) writes its result in place of an operand whose buffer
    dies there. Offsets are then assigned greedily, largest buffer first, at
    the lowest 64-byte-aligned offset that no buffer live at the same time
    occupies.

    The plan is recorded as attributes: `cuvil.memory.offset` on each op
    whose result is a buffer, and on the function `cuvil.memory.arena_bytes`
    (the planned peak), `cuvil.memory.lower_bound_bytes` (the most bytes
    live at any one op: no plan can use less) and
    `cuvil.memory.total_bytes` (all intermediates with no reuse). With
    `report`, a one-line summary per function goes to stderr.

    This plan is a report, not the code's memory: kernel selection and
    fusion change which tensors exist, so the code generator plans its
    arena on the buffers the lowered code has (`cuvil-allocs-to-arena`,
    with the same placement, support/ArenaPlacement.h). cuvil-export prints
    both figures and writes them to `--kernel-report`'s "memory". Functions
    with dynamic shapes get a plan for their static buffers only.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the plan's summary (stderr)">,
    Option<"inPlace", "in-place", "bool", /*default=*/"true",
           "Let element-wise ops write over an operand that dies there">,
    Option<"testEndAtDefinition", "test-end-at-definition", "bool", /*default=*/"false",
           "Testing: plant a planner bug (every buffer's life ends where it is "
           "defined, so it is reused while still read) for the lifetime check to catch">,
  ];
  let statistics = [
    Statistic<"numBuffers", "num-buffers", "Buffers placed in the arena">,
    Statistic<"numInPlace", "num-in-place", "Results written in place of an operand">,
  ];
}

def CuvilSpecializeShapesPass : Pass<"cuvil-specialize-shapes", "::mlir::ModuleOp"> {
  let summary = "Shape-specialised copies of the entry function, chosen at run time.";
  let description = [{
    For `sizes = "seq=128,256"` (symbols of `cuvil.dim_symbols`, values
    within their `cuvil.dim_bounds`; several symbols separated by `;` give
    every combination), the entry function becomes a dispatch: when every
    listed symbol has one of the combinations' values, a copy of the graph
    with those dimensions static runs (its shapes refined by
    `cuvil-infer-shapes`, so the static kernels and their packed weights
    serve it); otherwise the generic graph. The copies are inlined as the
    branches of `scf.if`s on the inputs' run-time sizes.

    ```mlir
    %n = tensor.dim %x, %c1 : tensor<1x?x64xf32>
    %is128 = arith.cmpi eq, %n, %c128 : index
    %r = scf.if %is128 -> (tensor<1x?x64xf32>) {
      %s = tensor.cast %x : tensor<1x?x64xf32> to tensor<1x128x64xf32>
      ... (static graph) ...
    } else { ... (generic graph) ... }
    ```
  }];
  let options = [
    Option<"sizes", "sizes", "std::string", "\"\"",
           "symbol=v1,v2[;symbol2=...]: the sizes to specialise for">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def CuvilCheckLifetimesPass : Pass<"cuvil-check-lifetimes", "::mlir::func::FuncOp"> {
  let summary = "Verifies a memory plan: no tensor is used after its buffer was reused.";
  let description = [{
    Recomputes the live ranges of the buffers that carry a
    `cuvil.memory.offset` (through views) and reports, as an error at the
    op that overwrites it, every use of a tensor after another tensor was
    written over its bytes, unless the overwrite is a legal in-place update
    at the tensor's last use. Run after `cuvil-plan-memory` and after any
    later transformation that moves ops.
  }];
}

def CuvilRecognizeCompositesPass
    : Pass<"cuvil-recognize-composites", "::mlir::func::FuncOp"> {
  let summary = "Turns softmax and layer norm written out in elementary ops into single ops.";
  let description = [{
    Matches the usual hand-written forms and replaces their result with one
    `cuvil.act.softmax` or `cuvil.norm.layer_norm` (the elementary ops are
    left to dead-code elimination):

    - softmax over `k`: `e / sum(e, [k], keepdim)` with `e = exp(x)` or
      `e = exp(x - max(x, [k], keepdim))`;
    - layer norm over the trailing dimensions: `d = x - mean(x, dims,
      keepdim)`, `v = mean(d * d)` (or `mean(d ^ 2)`, or
      `var(x, dims, correction = 0)`), then `d * rsqrt(v + eps)` or
      `d / sqrt(v + eps)`, optionally `* weight + bias` with weight and bias
      of the normalized shape.

    A single op is one kernel for the later stages and computes the
    statistics in one pass, with the stable formulation.
  }];
  let statistics = [
    Statistic<"numSoftmax", "num-softmax", "Softmaxes recognised">,
    Statistic<"numLayerNorm", "num-layer-norm", "Layer norms recognised">,
  ];
}

def CuvilDeadCodeEliminationPass
    : Pass<"cuvil-dce", "::mlir::func::FuncOp"> {
  let summary = "Removes side-effect-free operations whose results are unused.";
  let description = [{
    Erases every operation whose results have no uses and that has no side
    effects (MLIR's memory-effect interfaces, looking into regions: an
    `scf.if` that only computes unused values goes, one that holds a
    `cuvil.effect.print` stays), repeating until nothing changes. Ops with
    effects (`cuvil.effect.assert`, `cuvil.effect.print`) and the values
    they use are never removed. The pipeline's `dead-code-elimination`
    switch turns this pass off.

    ```mlir
    %unused = cuvil.act.relu %x : tensor<4xf32>          // removed
    cuvil.effect.print "{}" %y : tensor<4xf32>             // kept, with %y
    ```
  }];
  let statistics = [
    Statistic<"numErased", "num-erased", "Operations removed">,
  ];
}

def CuvilFoldQuantRoundTripsPass
    : Pass<"cuvil-fold-quant-round-trips", "::mlir::func::FuncOp"> {
  let summary = "Runs the ops between quantized layers on the storage: quantize(dequantize(q, P), P) folds to q.";
  let description = [{
    Quantized models come out of `cuvil-quantize` and the importer of
    PyTorch-quantized models with every float op between two quantized
    layers wrapped in `dequantize` ... `quantize`. This pass removes the
    round trips that change nothing, so the layers read each other's 8-bit
    storage:
    - a `relu` / `hardtanh` of a dequantized tensor every representable
      value of which already lies within its bounds (a relu after an output
      whose zero point is the storage's minimum) is the identity;
    - max pooling, reshape and flatten of a dequantized tensor (per tensor)
      run on the storage instead, the dequantization after them;
    - `quantize(dequantize(q, P), P)` is `q`; one quantization per value,
      parameters and type; dequantizations left unused go.

    ```mlir
    %d = cuvil.quant.dequantize %q {params = #P} : tensor<1x8x8x8xui8> -> tensor<1x8x8x8xf32>
    %m = cuvil.pool.max_pool2d %d ...
    %r = cuvil.quant.quantize %m {params = #P}          // becomes a max pool of %q
    ```
  }];
}

#endif // CUVIL_DIALECT_CUVIL_TRANSFORMS_PASSES_TD
