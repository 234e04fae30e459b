//===- RunLoop.cpp - Read inputs, run, write outputs, time, check ---------===//
#include "cuvil-run/RunLoop.h"

#include "support/AtomicFile.h"
#include "support/Npy.h"
#include "support/Staging.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace cuvil {

namespace {

/// splitmix64: the same numbers on every machine and compiler.
uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// "[INDEX=]DIMx...xDTYPE:random" (the dtype alone for a 0-d tensor):
/// uniform in [-1, 1) for floats, integers in [0, 10), booleans; the seed
/// is `seed` + the input's position. Not a spec: nullopt.
std::optional<Result<Tensor>> generatedInput(const std::string &arg, size_t position, uint64_t seed) {
  const std::string suffix = ":random";
  if (arg.size() <= suffix.size() || arg.compare(arg.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  std::string spec = arg.substr(0, arg.size() - suffix.size());
  auto bad = [&](const std::string &why) -> Result<Tensor> {
    return usageError("--input '" + arg + "': " + why +
                      " (expected [INDEX=]DIMxDIM...xDTYPE:random, e.g. 0=1x3x224x224xf32:random)");
  };
  if (size_t eq = spec.find('='); eq != std::string::npos) {
    std::string index = spec.substr(0, eq);
    if (index != std::to_string(position))
      return bad("index " + index + " given at input position " + std::to_string(position));
    spec = spec.substr(eq + 1);
  }
  std::vector<int64_t> shape;
  size_t at = 0;
  for (size_t x; (x = spec.find('x', at)) != std::string::npos && x > at && std::isdigit(spec[at]);
       at = x + 1) {
    std::string dim = spec.substr(at, x - at);
    if (dim.empty() || dim.size() > 12 || dim.find_first_not_of("0123456789") != std::string::npos)
      return bad("dimension '" + dim + "' is not a number");
    shape.push_back(std::stoll(dim));
  }
  std::optional<DType> dtype = parseDType(spec.substr(at));
  if (!dtype)
    return bad("unknown element type '" + spec.substr(at) + "'");
  int64_t elements = 1;
  for (int64_t d : shape)
    if (d > 0 && elements > (int64_t(1) << 40) / d)
      return bad("too many elements");
    else
      elements *= d;
  Tensor t(*dtype, shape);
  uint64_t state = seed + position;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    uint64_t r = nextRandom(state);
    if (isFloat(*dtype) || isComplex(*dtype))
      t.setDouble(i, double(r >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    else if (*dtype == DType::Bool)
      t.setDouble(i, double(r & 1));
    else
      t.setDouble(i, double(r % 10));
  }
  return Result<Tensor>(std::move(t));
}

} // namespace

Result<Tensor> readInput(const std::string &arg, size_t position, uint64_t seed,
                         const NpyExpectation *expect) {
  std::optional<Result<Tensor>> generated = generatedInput(arg, position, seed);
  return generated ? std::move(*generated) : readNpy(arg, expect);
}

Result<std::vector<Tensor>> readInputs(const std::vector<std::string> &paths, uint64_t seed,
                                       const std::vector<NpyExpectation> *expect) {
  std::vector<Tensor> inputs;
  for (const std::string &path : paths) {
    size_t i = inputs.size();
    Result<Tensor> t = readInput(path, i, seed, expect && i < expect->size() ? &(*expect)[i] : nullptr);
    if (!t)
      return t.error();
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

bool RunReport::checksPassed() const {
  return std::all_of(checks.begin(), checks.end(), [](const OutputCheck &c) { return c.passed; });
}

namespace {

LatencyStats summarize(std::vector<double> times, int warmup) {
  LatencyStats s;
  std::sort(times.begin(), times.end());
  s.runs = int(times.size());
  s.warmup = warmup;
  auto pct = [&](double p) {
    return times[std::min(times.size() - 1, size_t(p * double(times.size() - 1) + 0.5))];
  };
  s.min = times.front();
  s.max = times.back();
  double sum = 0;
  for (double t : times)
    sum += t;
  s.mean = sum / double(times.size());
  double var = 0;
  for (double t : times)
    var += (t - s.mean) * (t - s.mean);
  s.stdev = times.size() > 1 ? std::sqrt(var / double(times.size() - 1)) : 0;
  s.p50 = pct(0.5);
  s.p90 = pct(0.9);
  s.p99 = pct(0.99);
  return s;
}

std::string multiIndex(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

} // namespace

OutputCheck compareOutput(const Tensor &got, const Tensor &want, double rtol, double atol) {
  OutputCheck c;
  if (got.shape() != want.shape()) {
    c.problem = "shape " + got.describe() + ", expected " + want.describe();
    return c;
  }
  double worstExcess = -INFINITY;
  for (int64_t i = 0; i < got.numElements(); ++i) {
    double g = got.getDouble(i), w = want.getDouble(i);
    if (std::isnan(g) && std::isnan(w))
      continue;
    double err = std::fabs(g - w), excess = err - (atol + rtol * std::fabs(w));
    if (std::isnan(err)) // one NaN, or inf - inf of different signs
      excess = INFINITY;
    else if (std::isinf(g) && g == w)
      continue;
    if (excess > 0)
      ++c.mismatches;
    if (!(err <= c.maxAbsError)) // NaN too
      c.maxAbsError = err;
    if (excess > worstExcess) {
      worstExcess = excess;
      c.worst = i;
      c.got = g;
      c.want = w;
      c.absError = err;
    }
  }
  if (c.worst >= 0)
    c.worstAt = multiIndex(got.shape(), c.worst);
  c.passed = c.mismatches == 0;
  return c;
}

void printProfile(std::vector<ProfileRow> rows, int runs) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ProfileRow &a, const ProfileRow &b) { return a.totalMs > b.totalMs; });
  double total = 0;
  for (const ProfileRow &r : rows)
    total += r.totalMs;
  runs = std::max(runs, 1);
  std::printf("profile over %d run(s): %.4g ms per run in %zu timed site(s)\n", runs, total / runs,
              rows.size());
  std::printf("  %10s %7s %6s  %s\n", "ms/run", "calls", "share", "layer (kernel)");
  for (const ProfileRow &r : rows)
    std::printf("  %10.4f %7.3g %5.1f%%  %s\n", r.totalMs / runs, double(r.calls) / runs,
                total > 0 ? 100.0 * r.totalMs / total : 0.0, r.name.c_str());
  std::fflush(stdout);
}

Error checkFailure(const std::vector<OutputCheck> &checks, const RunSettings &settings) {
  std::string msg;
  for (const OutputCheck &c : checks) {
    if (c.passed)
      continue;
    if (!msg.empty())
      msg += "; ";
    msg += "output" + std::to_string(c.output) + " differs from '" + c.expectedPath + "': ";
    if (!c.problem.empty()) {
      msg += c.problem;
      continue;
    }
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%lld element(s) beyond --atol %g + --rtol %g x |expected|, the worst at %s: "
                  "got %.9g, expected %.9g (|error| %.3g)",
                  (long long)c.mismatches, settings.atol, settings.rtol, c.worstAt.c_str(), c.got,
                  c.want, c.absError);
    msg += buf;
  }
  return withId(inputError(msg), "CUVIL-E-OUTPUT-MISMATCH");
}

Result<RunReport> runAndWrite(const RunFn &run, const std::vector<Tensor> &inputs,
                              const RunSettings &settings) {
  // Expected outputs are read first: a bad path fails before any work.
  std::vector<Tensor> expected;
  for (const std::string &path : settings.expected) {
    Result<Tensor> t = readNpy(path);
    if (!t)
      return t.error();
    expected.push_back(std::move(*t));
  }
  RunReport report;
  std::vector<Tensor> outputs;
  bool timing = settings.benchmark > 0 || settings.duration > 0;
  int warmup = settings.warmup >= 0 ? settings.warmup : timing ? 1 : 0;
  for (int i = 0; i < warmup; ++i)
    if (Status s = run(inputs, outputs); !s)
      return s.error();
  if (settings.afterWarmup)
    settings.afterWarmup();
  std::vector<double> times;
  auto begin = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    auto start = std::chrono::steady_clock::now();
    Status s = run(inputs, outputs);
    auto end = std::chrono::steady_clock::now();
    if (!s)
      return s.error();
    times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    report.runs = int(times.size());
    bool enoughRuns = i + 1 >= std::max(1, settings.benchmark);
    bool enoughTime = std::chrono::duration<double>(end - begin).count() >= settings.duration;
    if (!timing || (enoughRuns && enoughTime))
      break;
  }
  if (!expected.empty() && expected.size() != outputs.size())
    return inputError(std::to_string(expected.size()) + " --expected-output file(s) for " +
                      std::to_string(outputs.size()) + " output(s)");
  // The outputs are published together, once all are written.
  OutputSet written;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor out = outputs[i];
    if (out.dtype() == DType::BFloat16) {
      std::fprintf(stderr, "cuvil-run: warning: output%zu is bf16, which NumPy lacks; writing it as f32\n", i);
      out = out.cast(DType::Float32);
    }
    std::string path = settings.outputDir + "/output" + std::to_string(i) + ".npy";
    if (Status s = written.add(path, serializeNpy(out)); !s)
      return s.error();
    report.outputPaths.push_back(path);
    report.outputs.push_back(out);
    report.outputTypes.push_back(out.describe());
    if (!settings.quiet)
      std::printf("output%zu: %s -> %s\n", i, out.preview().c_str(), path.c_str());
    if (i < expected.size()) {
      OutputCheck c = compareOutput(out, expected[i], settings.rtol, settings.atol);
      c.output = i;
      c.expectedPath = settings.expected[i];
      std::printf("output%zu vs '%s': %s", i, c.expectedPath.c_str(), c.passed ? "match" : "MISMATCH");
      if (!c.problem.empty())
        std::printf(" (%s)", c.problem.c_str());
      else if (c.passed)
        std::printf(" (largest |error| %.3g)", c.maxAbsError);
      else
        std::printf(" (%lld element(s), the worst at %s: |error| %.3g)", (long long)c.mismatches,
                    c.worstAt.c_str(), c.absError);
      std::printf("\n");
      report.checks.push_back(c);
    }
  }
  if (Status s = written.commit(); !s)
    return s.error();
  if (timing) {
    LatencyStats s = summarize(times, warmup);
    // Four significant digits: tiny models run in well under a microsecond.
    std::printf("latency over %d run(s): min %.4g ms, median %.4g ms, p90 %.4g ms, p99 %.4g ms, "
                "mean %.4g ms, stdev %.3g ms (after %d warm-up run(s))\n",
                s.runs, s.min, s.p50, s.p90, s.p99, s.mean, s.stdev, s.warmup);
    report.latency = s;
  }
  std::fflush(stdout); // before any error on stderr about these results
  return report;
}

} // namespace cuvil
