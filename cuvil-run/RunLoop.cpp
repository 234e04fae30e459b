//===- RunLoop.cpp - Read inputs, run, write outputs, time ----------------===//
#include "cuvil-run/RunLoop.h"

#include "support/AtomicFile.h"
#include "support/Npy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace cuvil {

Result<std::vector<Tensor>> readInputs(const std::vector<std::string> &paths) {
  std::vector<Tensor> inputs;
  for (const std::string &path : paths) {
    Result<Tensor> t = readNpy(path);
    if (!t)
      return t.error();
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

Status runAndWrite(const RunFn &run, const std::vector<Tensor> &inputs,
                   const RunSettings &settings) {
  std::vector<double> times;
  std::vector<Tensor> outputs;
  int runs = std::max(1, settings.benchmark);
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    Status s = run(inputs, outputs);
    auto end = std::chrono::steady_clock::now();
    if (!s)
      return s;
    times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor out = outputs[i];
    if (out.dtype() == DType::BFloat16) {
      std::fprintf(stderr, "cuvil-run: warning: output%zu is bf16, which NumPy lacks; writing it as f32\n", i);
      out = out.cast(DType::Float32);
    }
    std::string path = settings.outputDir + "/output" + std::to_string(i) + ".npy";
    if (Status s = writeNpy(path, out); !s)
      return s;
    if (!settings.quiet)
      std::printf("output%zu: %s -> %s\n", i, out.preview().c_str(), path.c_str());
  }
  if (settings.benchmark > 0) {
    std::sort(times.begin(), times.end());
    auto pct = [&](double p) {
      return times[std::min(times.size() - 1, size_t(p * (times.size() - 1) + 0.5))];
    };
    // Four significant digits: tiny models run in well under a microsecond.
    std::printf("latency over %d run(s): min %.4g ms, median %.4g ms, p90 %.4g ms\n", runs,
                times.front(), pct(0.5), pct(0.9));
  }
  return Status::ok();
}

} // namespace cuvil
