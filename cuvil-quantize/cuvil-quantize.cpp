//===- cuvil-quantize.cpp - Post-training int8 quantization ---------------===//
//
// cuvil-quantize --model MODEL --calibration-data DIR --output QUANT.mlirbc
//     [--method minmax|percentile|entropy|mse] [--per-channel|--no-per-channel]
//     [--backend x86|qnnpack|onednn] [--max-l2 0.01] [--kl-threshold 0.02]
//     [--fallback fp16|bf16|fp32] [--validation-data DIR]
//     [--calibration-table FILE.textproto] [--report FILE.json] [--html FILE.html]
//     [--input-shape SPEC]...
//
// A thin main over quantize/Quantizer.h, which holds the workflow.
//
//===----------------------------------------------------------------------===//
#include "quantize/Quantizer.h"
#include "support/LargeStack.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Tool/ToolSupport.h"
#include "targets/Targets.h"

#include <cstdio>

using namespace cuvil;

namespace {

const char *kTool = "cuvil-quantize";

struct Options {
  quant::QuantizeOptions quantize;
  std::string method = "percentile", crashReproducer;
  bool noPerChannel = false, noProgress = false;
  LogOptions log;
};

int run(Options &opt) {
  std::optional<quant::Method> method = quant::parseMethod(opt.method);
  if (!method)
    return reportError(kTool, usageError("--method must be minmax, percentile, entropy or mse, got '" +
                                         opt.method + "'"));
  opt.quantize.method = *method;
  opt.quantize.perChannel = !opt.noPerChannel;
  opt.quantize.progress = !opt.noProgress;
  if (Status s = quant::quantizeModel(opt.quantize); !s)
    return reportError(kTool, s.error());
  return kExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  quant::QuantizeOptions &q = opt.quantize;
  CLI::App app{
      "Post-training quantization: calibrates a float model on sample inputs, rewrites its "
      "convolution and linear layers to int8 (weights per channel, activations per tensor), "
      "checks the outputs against the float model's (relative L2 <= --max-l2 on the validation "
      "samples) and, while that gate fails, moves the most sensitive layers to fp16/bf16/fp32. "
      "Writes the quantized cuvil IR, which cuvil-export compiles.\n\n"
      "Calibration data: a directory of samples, each an .npz file or a sub-directory with "
      "input0.npy, input1.npy, ... in the shapes the model takes.\n\n"
      "Exit status: 0 success, 1 the model cannot be quantized or the gate cannot be met (the "
      "reports are still written), 2 usage error, 3 I/O error. Outputs are written atomically.",
      kTool};
  app.add_option("--model", q.model, "The float model: .pt, .mlir or .mlirbc")->required();
  app.add_option("--calibration-data", q.calibrationData, "Directory of calibration samples")->required();
  app.add_option("--output,-o", q.output, "The quantized model (.mlirbc, or .mlir for text)")->required();
  app.add_option("--method", opt.method,
                 "How activation ranges are chosen: minmax, percentile (default; see --percentile), "
                 "entropy (KL divergence, TensorRT's method) or mse")
      ->capture_default_str();
  app.add_option("--percentile", q.percentile, "The percentile of |x| kept by --method percentile")
      ->check(CLI::Range(50.0, 100.0))
      ->capture_default_str();
  app.add_flag("--per-channel", q.perChannel, "Weights quantized per output channel (the default)");
  app.add_flag("--no-per-channel", opt.noPerChannel, "Weights quantized per tensor");
  app.add_option("--backend", q.backend,
                 "Quantization scheme: x86 (u8 activations, s8 weights on [-127, 127]; default), "
                 "qnnpack or onednn (s8 weights on [-128, 127])")
      ->check(CLI::IsMember({"x86", "qnnpack", "onednn"}))
      ->capture_default_str();
  app.add_option("--max-l2", q.maxL2, "The gate: relative L2 error of the outputs, |q - f| / |f|")
      ->check(positiveNumber())
      ->capture_default_str();
  app.add_option("--kl-threshold", q.klThreshold,
                 "A layer whose outputs' KL divergence alone in int8 exceeds this falls back first")
      ->check(nonNegativeNumber())
      ->capture_default_str();
  app.add_option("--fallback", q.fallback,
                 "Precision of layers taken out of int8: fp16 (default; fp32 where fp16 would "
                 "overflow), bf16 or fp32")
      ->check(CLI::IsMember({"fp16", "bf16", "fp32"}))
      ->capture_default_str();
  app.add_option("--validation-data", q.validationData,
                 "Directory of samples for the gate (default: the calibration samples)");
  app.add_option("--calibration-table", q.calibrationTable,
                 "Calibration table (Protobuf; text for .textproto/.pbtxt): read and calibration "
                 "skipped when the file exists (it must come from the same graph), written otherwise");
  app.add_option("--report", q.report, "Also write the report here (JSON): layers in priority order, "
                                       "sensitivity, precision, ranges, fallbacks, gate figures");
  app.add_option("--html", q.html, "Also write the report as a self-contained HTML page with charts");
  app.add_option("--input-shape", q.inputShapes,
                 "Input shape INDEX_OR_NAME=DIMxDIM...xDTYPE for .pt models (see cuvil-import)");
  app.add_option("--samples", q.samples, "Use the first N calibration samples (an error if fewer exist)")
      ->check(positiveNumber());
  app.add_option("--sensitivity-samples", q.sensitivitySamples,
                 "Validation samples each sensitivity measurement runs (default 8; 0 = all)");
  app.add_option("--threads", q.threads, "Threads for running the model (0 = all cores)")
      ->check(nonNegativeNumber());
  app.add_flag("--no-progress", opt.noProgress, "No progress bar (there is none when stderr is not a terminal)");
  app.add_option("--crash-reproducer", opt.crashReproducer,
                 "Should the compiler fail internally, write the failing IR and stack trace here");
  addCommonOptions(app, opt.log);
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  mlir::cuvil::registerAllTargets();
  cuvil::installCrashHandlers(kTool, opt.crashReproducer);
  setupLogging(kTool, opt.log);
  // A large stack for MLIR's recursive parsing and passes (LargeStack.h).
  return cuvil::runOnLargeStack([&] { return run(opt); });
}
