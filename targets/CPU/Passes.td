//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
#ifndef CUVIL_TARGETS_CPU_PASSES_TD
#define CUVIL_TARGETS_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def AllocsToArenaPass : Pass<"cuvil-allocs-to-arena", "::mlir::ModuleOp"> {
  let summary = "Places every buffer of a bufferized function in one arena argument.";
  let description = [{
    After bufferization, each `memref.alloc` of a static shape is an
    intermediate. Their live ranges (through view-like ops: subview,
    collapse/expand_shape, cast, reinterpret_cast, view) are packed into
    one 64-byte-aligned arena, largest first at the lowest free offset, and
    every alloc becomes a `memref.view` of a new trailing function argument
    `memref<Nxi8>` (N: the arena size): the compiled code never calls malloc, and the runtime
    owns the memory (one arena per model instance). The arena size is
    recorded as `cuvil.arena_bytes` on the function. Allocations of dynamic
    size are an error. This is the one plan the code uses (the graph-level
    `cuvil-plan-memory` is a report: see its description); both place
    buffers with support/ArenaPlacement.h.
  }];
  let options = [
    Option<"testOverlapBuffers", "test-overlap-buffers", "bool", "false",
           "plant a planner bug for cuvil-verify-lifetimes' mutation test: every buffer at offset 0">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def VerifyLifetimesPass : Pass<"cuvil-verify-lifetimes", "::mlir::ModuleOp"> {
  let summary = "Checks that no arena bytes are held by two buffers that are live at once.";
  let description = [{
    Runs after `cuvil-allocs-to-arena`, on the placement the code really
    uses, and re-derives it independently of the planner: each arena view's
    bytes (at its dimensions' bounds) and its live range, from the view to
    the last use of anything aliasing it (views, casts, subviews, reshapes,
    selects, region and loop results; a buffer a loop reads, or hands from
    one iteration to the next, lives for the whole loop). Two buffers whose
    bytes overlap and whose ranges overlap are an error at the later one,
    naming both buffers, their source lines, and the use that would read
    overwritten data. Every export runs it.
  }];
}

def RunTimeShapeArgumentsPass : Pass<"cuvil-run-time-shape-arguments", "::mlir::ModuleOp"> {
  let summary = "Passes buffers of dynamic shape as bare pointers plus one array of run-time sizes.";
  let description = [{
    The bare-pointer calling convention takes static shapes only. Each
    dynamic argument of a bufferized function becomes memref<1xT> (its data
    pointer) and a trailing memref<Nxi64> holds the run's sizes: the
    inputs' dynamic dimensions (arguments with cuvil.dim_bounds), then the
    outputs' capacities. Inputs are rebuilt inside with
    memref.reinterpret_cast; the copy of a result into an output writes the
    result's sizes into the output's slots and runs only when they fit the
    capacity, else the function returns a status whose message (appended to
    cuvil.failure_messages) says so. The outputs' largest sizes, at the
    inputs' bounds, are recorded as cuvil.output_max_shapes.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def EmptyBufferArgumentsPass : Pass<"cuvil-empty-buffer-arguments", "::mlir::ModuleOp"> {
  let summary = "Passes buffers with no elements as memref<0xT>.";
  let description = [{
    A model input or output with a dimension of size 0 holds no elements,
    but MLIR's bare-pointer calling convention cannot take a zero-size
    buffer of rank 2 or more (its strides do not fold). Such an argument of
    a bufferized function becomes `memref<0xT>`, and the body uses a
    zero-size `memref.alloca` of the original type instead: nothing can be
    read from or written to either, so no data moves.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ProtectModelArgumentsPass : Pass<"cuvil-protect-model-arguments", "::mlir::ModuleOp"> {
  let summary = "Keeps model inputs read-only and every output its own buffer.";
  let description = [{
    Runs on tensors, before bufferization. Every argument of a public
    function is marked `bufferization.writable = false`: the caller's input
    buffers are never written. Where the function returns an argument
    itself (an identity model, a no-op view of its input), the result is a
    `linalg.copy` of it instead: bufferization would otherwise find the
    result equivalent to the argument and drop it, and the output buffer
    would never be written. A value returned at several positions
    (`return y, y`) is copied for each repetition, for the same reason: each
    output is a caller's buffer of its own.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def ChooseCpuKernelsPass : Pass<"cuvil-choose-cpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Writes a kernel configuration (#cuvil.kernel) on every kernel op.";
  let description = [{
    The choose half of kernel selection (kernel choices as data): every
    `cuvil.conv.conv2d`, `cuvil.gemm.linear`, `matmul`, `batch_matmul` and
    `cuvil.pool.max_pool2d` without a `cuvil.kernel` attribute gets one from
    the configuration provider (`provider=heuristics`, the built-in one):
    the kernel, its variant, the provider's name and the reason.
    Configurations already present (written by hand, or by an earlier
    provider) are kept. `kernel = "linalg"` means no kernel applies (the
    reason says why) or none is wanted. `cuvil-select-cpu-kernels` builds
    what the attributes say; targets/CPU/KernelConfig.h lists the kernels
    and variants.

    The heuristics: on static f32 tensors with constant weights,
    convolutions run on the blocked GEMM (`conv2d/im2col`), depthwise ones
    on a direct kernel (`depthwise_conv2d/direct`, weights may be computed
    at run time), linear layers as `linear/weight_rows` (y^T = W x^T) or,
    from 8 rows where it wastes fewer lanes, `linear/input_rows`, matrix
    products of run-time operands as `matmul/packed`, 2-D max pooling whose
    windows lie inside the padded input as `max_pool2d/direct`.

    3x3 stride-1 convolutions (groups 1, dilation 1, at least 8 channels in
    and out) with enough 4x4 output tiles (`winograd-min-tiles`) run as
    Winograd F(4x4, 3x3) (`conv2d/winograd_f4x4`); with fewer 4x4 tiles but
    enough 2x2 ones and at least 64 input and output channels (7x7 images
    of 512 channels), F(2x2, 3x3) (`conv2d/winograd_f2x2`).
    `winograd=false` keeps them all on the direct kernels,
    `winograd-2x2=false` only the F(2x2, 3x3) ones. Where an image's pixels
    make better GEMM rows than columns (7x7: 49 pixels fill 56 rows of 8
    but 64 columns of 32; pointwise layers only past a tenth of lanes
    wasted), `conv2d/pixel_rows`.

    A 3x3 stride-1 padding-1 depthwise convolution (at least 16 wide, at
    most 64 channels, channels x width at most 65536) whose output only
    feeds a 1x1 convolution, and is at least `fuse-depthwise-min-bytes`
    (past L2, so written out and read back): the 1x1 convolution gets
    `depthwise_pointwise/banded` (the pair runs in bands of rows that stay
    in cache). The other order too: a 1x1 stride-1 convolution (no
    residual) whose output only feeds a 3x3 padding-1 depthwise one (stride
    1 or 2, no residual, output at least 16 wide, even width at stride 2,
    channels x width at most 32768), that output being at least
    `fuse-depthwise-min-bytes`: the depthwise convolution gets
    `pointwise_depthwise/banded` (mobilenet_v2's 96 x 112 x 112 tensor).
  }];
  let options = [
    Option<"provider", "provider", "std::string", /*default=*/"\"heuristics\"",
           "Where configurations come from: heuristics (built in)">,
    Option<"tuningDb", "tuning-db", "std::string", /*default=*/"",
           "A tuning database (cuvil-autotune tune) whose records for `device` configure the kernels it has; the heuristics configure the rest">,
    Option<"device", "device", "std::string", /*default=*/"",
           "The device key of the records to use (target triple/CPU/feature digest; cuvil-export computes it)">,
    Option<"winograd", "winograd", "bool", /*default=*/"true",
           "Use Winograd F(4x4, 3x3) for 3x3 stride-1 convolutions where it pays">,
    Option<"winograd2x2", "winograd-2x2", "bool", /*default=*/"true",
           "Use Winograd F(2x2, 3x3) for 3x3 stride-1 convolutions with too few 4x4 tiles and many channels">,
    Option<"winogradMinTiles", "winograd-min-tiles", "int64_t", /*default=*/"16",
           "Fewest output tiles (4x4, or 2x2 for F(2x2, 3x3); over the batch) for which Winograd is used">,
    Option<"fuseDepthwiseMinBytes", "fuse-depthwise-min-bytes", "int64_t",
           /*default=*/"1 << 20",
           "Smallest tensor (bytes) between a depthwise and a pointwise convolution, either order, for which the pair runs in bands">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "A remark for each op that takes the general lowering (linalg) because a condition of its kernels' lowering rules fails, naming each rule's first failing condition">,
  ];
}

def PrintLoweringTablePass : Pass<"cuvil-print-lowering-table", "::mlir::ModuleOp"> {
  let summary = "Prints the CPU's lowering rules: op, kernel and variants, conditions, fallback.";
  let description = [{
    The table checkKernelChoice evaluates (targets/CPU/LoweringRules.cpp):
    for each op a kernel can run, the kernel and its variants, the named
    conditions in the order they are checked with what each requires, and
    the path the op takes when one fails. Printed on stderr; the IR is left
    alone.
  }];
}

def ExplainLoweringPass : Pass<"cuvil-explain-lowering", "::mlir::ModuleOp"> {
  let summary = "Prints, for every op a lowering rule covers, each condition's verdict.";
  let description = [{
    For each op of the module that a CPU lowering rule covers (in order):
    every rule for it, each condition checked with `holds` or `fails
    (why)` up to the first that fails, and where the op goes. Printed on
    stderr, each op headed by its name and location; the IR is left alone.
  }];
}

def SelectCpuKernelsPass : Pass<"cuvil-select-cpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Calls the runtime's kernels where each op's #cuvil.kernel says.";
  let description = [{
    The apply half of kernel selection: runs on cuvil IR before the
    lowering to linalg, after `cuvil-choose-cpu-kernels` (or on IR whose
    `cuvil.kernel` attributes were written by hand). Each kernel op whose
    configuration names a kernel becomes a call of the runtime's kernel for
    it (`cuvil_rt_conv2d_f32`, `cuvil_rt_depthwise_conv2d_f32`,
    `cuvil_rt_linear_f32`, `cuvil_rt_matmul_f32`, `cuvil_rt_max_pool2d_f32`,
    `cuvil_rt_depthwise_pointwise_f32`, `cuvil_rt_pointwise_depthwise_f32`;
    runtime/cpu/gemm.c): register-blocked, cache-blocked, multi-threaded.
    Ops without a configuration, or with `kernel = "linalg"`, stay for the
    linalg lowering. A configuration the kernel cannot run (a hand edit
    asking Winograd of a 5x5 convolution) is an error that names the op,
    the reason and the choices it has.

    A fusion group built around a kernel op whose body is `[add residual]
    [relu | hardtanh | clamp]` becomes one call with that epilogue; other
    groups are opened up and only the anchor uses a kernel. Weights are
    packed at compile time into the variant's layout: `[ceil(rows/8)][K][8]`
    per group (`im2col`, `weight_rows`), `[groups][ceil(N/32)][K][32]`
    (`pixel_rows`, `input_rows`; flags 16), Winograd U = G g G^T packed by
    blocks of 128 input channels `[ceil(Cin/128)][36 or 16][ceil(Cout/8)]
    [kc][8]` (flags 8, + 32 for F(2x2, 3x3)). A banded pair is one call
    with both convolutions' params (42). The call is written on buffers:
    inputs through `bufferization.to_memref`, the output a `memref.alloc`
    returned by a restrict, writable `bufferization.to_tensor`; arguments
    are `memref<1xT>` views of each buffer's start (bare pointers once
    lowered).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect"];
}

def PromoteAccumulatorsPass : Pass<"cuvil-promote-accumulators", "::mlir::ModuleOp"> {
  let summary = "Keeps the running value of reduction loops in registers (scf.for iter_args).";
  let description = [{
    An `scf.for` (no iter_args) whose body only loads, computes (loops of
    the same kind included) and stores, each store at indices defined
    outside the loop and read once before it, in the body, by a load of the
    same buffer and indices, and no other use of that buffer in the loop:
    the value becomes an iter_arg, loaded once before the loop and stored
    once after it (innermost loops first, so nests over several reduced
    dimensions are promoted whole). linalg's loops keep reductions in the
    output buffer, which LLVM cannot keep in a register (every buffer is a
    view of one arena), so such loops were neither pipelined nor
    vectorized.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
}

def CollapseParallelDimsPass : Pass<"cuvil-collapse-parallel-dims", "::mlir::func::FuncOp"> {
  let summary = "Merges the consecutive parallel dimensions of linalg.generic ops that every operand reads contiguously.";
  let description = [{
    A `linalg.generic` of static shapes whose consecutive parallel loop
    dimensions appear together and in order in every indexing map (or not
    at all: a broadcast operand) runs them as one dimension: its operands
    and results are collapsed (`tensor.collapse_shape`, a view once
    bufferized) and expanded back. An element-wise op on a
    `[8, 960, 6, 8]` tensor then loops once over 368640 elements instead
    of innermost loops of 8, which LLVM's vectorizer found not worth its
    run-time alias checks (so they ran scalar). Shapes with run-time sizes
    are left as they are (their bounds are tracked per dimension).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def ExpandArithPass : Pass<"cuvil-expand-arith"> {
  let summary = "Expands the arith ops LLVM has no instruction for, keeping float min/max for its intrinsics.";
  let description = [{
    `arith.ceildivsi`, `ceildivui` and `floordivsi` become arithmetic LLVM
    has. Float `maximumf`, `minimumf`, `maxnumf` and `minnumf` are left for
    the LLVM lowering, which makes them `llvm.maximum`, `llvm.minimum`,
    `llvm.maxnum` and `llvm.minnum`: LLVM's loop vectorizer reduces those
    in vector lanes (a max or min is exact in any order), where upstream's
    `arith-expand` turns them into compares and selects that no vectorizer
    recognizes, so a softmax's row maximum ran one element at a time.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ExpandExpPass : Pass<"cuvil-expand-exp", "::mlir::func::FuncOp"> {
  let summary = "f32 exp as arithmetic the loop vectorizer can widen, instead of a libm call per element.";
  let description = [{
    `math.exp` on f32 (scalars or vectors) becomes: x clamped to
    [-104, 89], n = roundeven(x * log2(e)), r = x - n * ln(2) in two FMA
    steps (Cody-Waite), exp(r) by Cephes' degree-6 polynomial, then times
    2^(n/2) and 2^(n - n/2), each a power of two built from its bits, so
    the result rounds once, to a subnormal or infinity where it must. NaN
    stays NaN. Within 2 ulp of a correctly rounded exp (the tests hold it to
    libm's expf). A softmax's exponentials ran as one libm call per element;
    these vectorize.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def HoistRowLoadsPass : Pass<"cuvil-hoist-row-loads", "::mlir::func::FuncOp"> {
  let summary = "Loads that do not depend on the innermost parallel dimension, out of it.";
  let description = [{
    An `scf.parallel` of two or more dimensions, constant bounds, whose
    body loads values that do not depend on its last induction variable
    from buffers the body does not store to (a bilinear resize's row
    indices and weights): the last dimension becomes an `scf.for` inside
    the others, and those loads go before it. The innermost loop then only
    streams along rows, which LLVM vectorizes; before, the loads stayed in
    it (LLVM cannot prove that the output, a view of the same arena, never
    overwrites them), so it found no bounds for its run-time alias checks
    and left the loop scalar. Like cuvil-promote-accumulators, this relies
    on a bufferized linalg op never writing a buffer it reads through
    another view.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
}

def ParallelizeLoopsPass : Pass<"cuvil-parallelize-loops", "::mlir::ModuleOp"> {
  let summary = "Runs the outer parallel loops of a bufferized program on the thread pool.";
  let description = [{
    Each outermost `scf.parallel` with constant bounds, no reductions and
    enough work (iterations x ops in its body >= `min-work`) is outlined
    into `func.func private @__cuvil_parallel_N(memref<64xi64>, i64, i64)`,
    which runs iterations [begin, end) of the first dimension, and replaced
    by a call of the runtime's `cuvil_rt_parallel_for_current(n, body,
    closure)`. Values from outside travel in the closure: scalars as bits,
    memrefs (static shape and layout) as their aligned pointer, rebuilt in
    the body as an LLVM descriptor cast back to the memref type; constants
    and globals are cloned into the body. Other loops stay serial.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"1 << 16",
           "Iterations times ops below which a loop stays on the calling thread">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def CountBranchesPass : Pass<"cuvil-count-branches", "::mlir::ModuleOp"> {
  let summary = "Counts how often each arm of the model's control flow runs (branch coverage).";
  let description = [{
    Runs first in the CPU lowering, on the cuvil IR: every `scf.if` (both
    branches; an if without an else gets an empty one) and `scf.while` (its
    body) with a line of the model's source starts with a call of
    `cuvil_rt_branch(i64 arm)`, and the public function starts with
    `cuvil_rt_branch_sites(table, count)`, `table` a constant of the arms'
    names, NUL-separated ("m.py:12 if then"). The runtime counts each arm's
    runs per model instance (cuvil_model_branch_*); cuvil-verify compares
    them with the reference evaluator's. Branches the graph passes flattened
    are not counted; the compiler's own (shape dispatch) have no model line
    and are not counted either.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def InstrumentKernelsPass : Pass<"cuvil-instrument-kernels", "::mlir::ModuleOp"> {
  let summary = "Times every runtime kernel call of the entry function (cuvil-export --instrument).";
  let description = [{
    Each call of a `cuvil_rt_*` function in the public function (the
    kernels, and `cuvil_rt_parallel_for_current` for the loops on the
    thread pool) is bracketed by `cuvil_rt_profile_begin(i64 site)` /
    `cuvil_rt_profile_end(i64 site)`, and the function starts with
    `cuvil_rt_profile_sites(table, count)`, where `table` is a constant of
    the sites' names, NUL-separated: the layer's module path where the call
    has one (a NameLoc from the kernel choice), else the source location,
    with the kernel's name. The runtime adds up each site's time per model
    instance (cuvil_model_profile_*).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def OutlineKernelsPass : Pass<"cuvil-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Makes every top-level loop nest of the model a function named by its code.";
  let description = [{
    Runs on loops, after cuvil-parallelize-loops. Each top-level op with
    regions and no results in a public function (a loop nest, a branch)
    becomes a call of a private `cuvil_kernel_<digest>` that takes the
    buffers and scalars it uses (constants are cloned in; an op using a
    value that cannot cross a bare-pointer boundary stays inline), and the
    parallel bodies `__cuvil_parallel_N` become `cuvil_parallel_<digest>`;
    the digest is that of the function's own code, so identical kernels
    are one function and a kernel's name does not depend on the model
    around it. The driver compiles and caches every function on its own.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def ExtractWeightsPass : Pass<"cuvil-extract-weights", "::mlir::ModuleOp"> {
  let summary = "Moves the model's weights out of the code, into a section linked separately.";
  let description = [{
    Runs on the LLVM dialect, last. Every constant global whose value is a
    resource (the model's tensors and the weights packed from them, of any
    size) or a non-splat dense array of at least 64 bytes becomes an external, hidden
    declaration `cuvil_weight_N` (N in module order), and its bytes go to a
    table the driver writes as its own object (`.cuvil.weights`). The code
    object then depends only on the weights' types, never on their values:
    a redeploy with new weights relinks the cached code with a new weights
    object. cuvil-export calls the extraction directly (it keeps the
    bytes); this pass records the table as the module attribute
    `cuvil.weights` (name, bytes, alignment per symbol) for tests.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // CUVIL_TARGETS_CPU_PASSES_TD
