//===- QuantizeReport.cpp - cuvil-quantize's JSON and HTML reports --------===//
#include "quantize/QuantizeReport.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>

namespace cuvil::quant {
namespace {

llvm::json::Value number(double v) {
  if (!std::isfinite(v))
    return nullptr; // JSON has no NaN/Inf
  return v;
}

llvm::json::Object comparisonJson(const Comparison &c) {
  llvm::json::Array kl;
  for (double k : c.perOutputKL)
    kl.push_back(number(k));
  return llvm::json::Object{{"relative_l2", number(c.relativeL2)},
                            {"cosine", number(c.cosine)},
                            {"kl", number(c.kl)},
                            {"per_output_kl", std::move(kl)},
                            {"non_finite", c.nonFinite}};
}

/// A layer's input or output: its tensor's parameters and the dtype the
/// quantized model gives it.
llvm::json::Object activationJson(const TensorReport &t, const char *dtype) {
  return llvm::json::Object{{"tensor", t.name},
                            {"dtype", dtype},
                            {"range", llvm::json::Array{number(t.range.lo), number(t.range.hi)}},
                            {"scale", number(t.params.scale)},
                            {"zero_point", t.params.zeroPoint}};
}

std::string fmt(double v, const char *f = "%.4g") {
  if (!std::isfinite(v))
    return std::isnan(v) ? "n/a" : "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

const char *precisionColor(const std::string &p) {
  if (p == "int8")
    return "#2b7bba";
  if (p == "fp16")
    return "#e8912d";
  if (p == "bf16")
    return "#9b59b6";
  return "#c0392b";
}

/// A horizontal bar chart of sensitivity (log scale) in priority order.
std::string sensitivityChart(const QuantizeReportData &r) {
  double lo = 1e-6, hi = 1e-6;
  for (const LayerReport &l : r.layers)
    if (std::isfinite(l.aloneInt8.relativeL2) && l.aloneInt8.relativeL2 > 0)
      hi = std::max(hi, l.aloneInt8.relativeL2);
  for (const LayerReport &l : r.layers)
    if (std::isfinite(l.aloneInt8.relativeL2) && l.aloneInt8.relativeL2 > 0)
      lo = std::min(std::max(lo, hi * 1e-4), l.aloneInt8.relativeL2);
  lo = std::min(lo, hi / 10);
  int rowH = 16, left = 230, width = 520, top = 24;
  int height = top + rowH * int(r.priority.size()) + 30;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "<svg class=\"chart\" id=\"sensitivity\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
     << left + width + 80 << "\" height=\"" << height << "\" role=\"img\">";
  os << "<text x=\"" << left << "\" y=\"14\" class=\"axis\">relative L2 of the output with only this "
     << "layer in int8 (log scale)</text>";
  auto x = [&](double v) {
    if (!(v > 0) || !std::isfinite(v))
      return double(left + (std::isinf(v) ? width : 0));
    double t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return left + std::clamp(t, 0.0, 1.0) * width;
  };
  double gate = x(r.maxL2);
  for (size_t k = 0; k < r.priority.size(); ++k) {
    const LayerReport &l = r.layers[r.priority[k]];
    int y = top + int(k) * rowH;
    double w = x(l.aloneInt8.relativeL2) - left;
    os << "<text x=\"" << left - 6 << "\" y=\"" << y + 12 << "\" text-anchor=\"end\">" << l.priority
       << ". " << escape(l.name) << "</text>";
    os << "<rect x=\"" << left << "\" y=\"" << y + 2 << "\" width=\"" << fmt(std::max(w, 1.0), "%.1f")
       << "\" height=\"" << rowH - 4 << "\" fill=\"" << precisionColor(l.precision) << "\"><title>"
       << escape(l.name) << ": " << fmt(l.aloneInt8.relativeL2) << " (" << l.precision
       << ")</title></rect>";
    os << "<text x=\"" << left + w + 4 << "\" y=\"" << y + 12 << "\" class=\"value\">"
       << fmt(l.aloneInt8.relativeL2, "%.2e") << "</text>";
  }
  if (r.maxL2 >= lo && r.maxL2 <= hi)
    os << "<line x1=\"" << gate << "\" x2=\"" << gate << "\" y1=\"" << top << "\" y2=\"" << height - 24
       << "\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/><text x=\"" << gate << "\" y=\""
       << height - 10 << "\" class=\"axis\" text-anchor=\"middle\">--max-l2 " << fmt(r.maxL2) << "</text>";
  os << "</svg>";
  return s;
}

/// The error after each check (the first is every layer in int8).
std::string stepsChart(const QuantizeReportData &r) {
  double hi = r.maxL2;
  for (const GateStep &s : r.steps)
    if (std::isfinite(s.result.relativeL2))
      hi = std::max(hi, s.result.relativeL2);
  hi *= 1.1;
  int left = 60, width = 60 * std::max<int>(2, int(r.steps.size())), height = 220, top = 20, bottom = 190;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "<svg class=\"chart\" id=\"steps\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 40
     << "\" height=\"" << height << "\" role=\"img\">";
  auto y = [&](double v) { return bottom - (std::isfinite(v) ? v / hi : 1.0) * (bottom - top); };
  os << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"" << top << "\" y2=\"" << bottom
     << "\" stroke=\"#555\"/>";
  for (int t = 0; t <= 4; ++t) {
    double v = hi * t / 4;
    os << "<text x=\"" << left - 4 << "\" y=\"" << y(v) + 4 << "\" text-anchor=\"end\" class=\"axis\">"
       << fmt(v, "%.3g") << "</text>";
  }
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const GateStep &st = r.steps[k];
    double x0 = left + 10 + 60.0 * k, v = st.result.relativeL2;
    os << "<rect x=\"" << x0 << "\" y=\"" << y(v) << "\" width=\"40\" height=\"" << bottom - y(v)
       << "\" fill=\"" << (st.simulated ? "#9db9d3" : "#2b7bba") << "\"><title>"
       << (k == 0 ? std::string("all layers int8") : escape(st.layer.empty() ? "re-check" : st.layer))
       << (st.simulated ? " (simulated)" : " (compiled)") << ": " << fmt(v) << "</title></rect>";
    os << "<text x=\"" << x0 + 20 << "\" y=\"" << bottom + 14 << "\" text-anchor=\"middle\" class=\"axis\">"
       << (k == 0 ? std::string("int8") : (st.simulated ? "sim " : "real ") + std::to_string(k)) << "</text>";
  }
  double g = y(r.maxL2);
  os << "<line x1=\"" << left << "\" x2=\"" << left + width << "\" y1=\"" << g << "\" y2=\"" << g
     << "\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/><text x=\"" << left + width + 2 << "\" y=\"" << g + 4
     << "\" class=\"axis\">gate</text>";
  os << "</svg>";
  return s;
}

std::string histogramChart(const TensorReport &t, int id) {
  std::string s;
  llvm::raw_string_ostream os(s);
  int width = 320, height = 140, bottom = 110;
  double peak = 0;
  for (double c : t.histogram)
    peak = std::max(peak, c);
  os << "<figure><svg class=\"chart histogram\" id=\"hist" << id
     << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\">";
  double bw = double(width) / std::max<size_t>(1, t.histogram.size());
  for (size_t b = 0; b < t.histogram.size(); ++b) {
    // sqrt scale: the tails stay visible next to the peak
    double h = peak > 0 ? std::sqrt(t.histogram[b] / peak) * (bottom - 10) : 0;
    os << "<rect x=\"" << fmt(b * bw, "%.2f") << "\" y=\"" << fmt(bottom - h, "%.2f") << "\" width=\""
       << fmt(std::max(bw - 0.5, 0.5), "%.2f") << "\" height=\"" << fmt(h, "%.2f") << "\" fill=\"#2b7bba\"/>";
  }
  auto x = [&](double v) {
    return t.histHi > t.histLo ? (v - t.histLo) / (t.histHi - t.histLo) * width : 0.0;
  };
  for (double v : {t.range.lo, t.range.hi})
    os << "<line x1=\"" << fmt(x(v), "%.1f") << "\" x2=\"" << fmt(x(v), "%.1f")
       << "\" y1=\"0\" y2=\"" << bottom << "\" stroke=\"#c0392b\" stroke-width=\"2\"/>";
  os << "<text x=\"0\" y=\"" << bottom + 14 << "\" class=\"axis\">" << fmt(t.histLo) << "</text>";
  os << "<text x=\"" << width << "\" y=\"" << bottom + 14 << "\" text-anchor=\"end\" class=\"axis\">"
     << fmt(t.histHi) << "</text>";
  os << "</svg><figcaption>" << escape(t.name) << ": range [" << fmt(t.range.lo) << ", " << fmt(t.range.hi)
     << "] (red), scale " << fmt(t.params.scale) << ", zero point " << t.params.zeroPoint
     << "</figcaption></figure>";
  return s;
}

} // namespace

std::string renderJson(const QuantizeReportData &r) {
  llvm::json::Array tensors;
  for (const TensorReport &t : r.tensors)
    tensors.push_back(llvm::json::Object{{"name", t.name},
                                         {"observed_min", number(t.observedMin)},
                                         {"observed_max", number(t.observedMax)},
                                         {"count", int64_t(t.count)},
                                         {"range", llvm::json::Array{number(t.range.lo), number(t.range.hi)}},
                                         {"scale", number(t.params.scale)},
                                         {"zero_point", t.params.zeroPoint}});
  llvm::json::Array layers;
  for (size_t i : r.priority) {
    const LayerReport &l = r.layers[i];
    const TensorReport &in = r.tensors[l.input], &out = r.tensors[l.output];
    llvm::json::Object layer{
        {"priority", l.priority},
        {"name", l.name},
        {"op", l.kind},
        {"precision", l.precision},
        {"fallback_reason", l.reason},
        {"sensitivity", llvm::json::Object{{"alone_int8", comparisonJson(l.aloneInt8)},
                                           {"alone_float", comparisonJson(l.aloneFloat)}}},
        {"kl", number(l.aloneInt8.kl)},
        {"input", activationJson(in, "ui8")},
        {"output", activationJson(out, l.floatOutput && l.precision == "int8" ? "f32" : "ui8")},
        {"weight_abs_max", number(l.weightAbsMax)}};
    if (l.rhs >= 0)
      layer["rhs"] = activationJson(r.tensors[l.rhs], "ui8");
    layers.push_back(std::move(layer));
  }
  llvm::json::Array fallbacks, steps;
  for (size_t i : r.priority)
    if (r.layers[i].precision != "int8")
      fallbacks.push_back(llvm::json::Object{{"layer", r.layers[i].name},
                                             {"precision", r.layers[i].precision},
                                             {"reason", r.layers[i].reason}});
  for (const GateStep &s : r.steps)
    steps.push_back(llvm::json::Object{{"fell_back", s.layer},
                                       {"checked_on", s.simulated ? "simulation" : "compiled model"},
                                       {"result", comparisonJson(s.result)}});
  llvm::json::Object root{
      {"schema", "cuvil-quantize-report/1"},
      {"model", r.model},
      {"output", r.output},
      {"method", r.method},
      {"percentile", r.percentile},
      {"backend", r.backend},
      {"per_channel", r.perChannel},
      {"fallback", r.fallback},
      {"graph_hash", r.graphHash},
      {"calibration", llvm::json::Object{{"samples", int64_t(r.calibrationSamples)},
                                         {"digest", r.calibrationDigest},
                                         {"source", r.tableSource},
                                         {"table_digest", r.tableDigest}}},
      {"validation_samples", int64_t(r.validationSamples)},
      {"sensitivity_samples", int64_t(r.sensitivitySamples)},
      {"gate", llvm::json::Object{{"max_l2", r.maxL2},
                                  {"kl_threshold", r.klThreshold},
                                  {"passed", r.passed},
                                  {"failure", r.failure},
                                  {"before_fallback", comparisonJson(r.before)},
                                  {"after_fallback", comparisonJson(r.after)}}},
      {"layers", std::move(layers)},
      {"fallbacks", std::move(fallbacks)},
      {"steps", std::move(steps)},
      {"tensors", std::move(tensors)},
      {"seconds", r.seconds}};
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return s;
}

std::string renderHtml(const QuantizeReportData &r) {
  std::string s;
  llvm::raw_string_ostream os(s);
  size_t int8 = 0;
  for (const LayerReport &l : r.layers)
    int8 += l.precision == "int8";
  os << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>cuvil-quantize: "
     << escape(r.model) << "</title><style>"
     << "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}"
     << "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
     << ".verdict{padding:8px 12px;border-radius:4px;display:inline-block;font-weight:600}"
     << ".pass{background:#dff0d8;color:#2d6a2d}.fail{background:#f8d7da;color:#8a1c25}"
     << "table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left}"
     << "td.num{text-align:right;font-variant-numeric:tabular-nums}"
     << "svg text{font-size:11px}.axis{fill:#555}.value{fill:#333}"
     << "figure{display:inline-block;margin:6px 12px 6px 0}figcaption{font-size:12px;color:#444}"
     << ".swatch{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px}"
     << "</style></head><body>";
  os << "<h1>cuvil-quantize report: " << escape(r.model) << "</h1>";
  os << "<p><span class=\"verdict " << (r.passed ? "pass\">gate met" : "fail\">gate not met") << "</span> "
     << "relative L2 " << fmt(r.after.relativeL2) << " (threshold " << fmt(r.maxL2) << "), cosine "
     << fmt(r.after.cosine, "%.6f") << ", KL " << fmt(r.after.kl) << "; " << int8 << " of " << r.layers.size()
     << " layers in int8.</p>";
  if (!r.failure.empty())
    os << "<p class=\"fail\">" << escape(r.failure) << "</p>";
  os << "<p>Method <b>" << escape(r.method) << "</b>, backend <b>" << escape(r.backend) << "</b>, weights "
     << (r.perChannel ? "per channel" : "per tensor") << ", fallback " << escape(r.fallback) << "; "
     << r.calibrationSamples << " calibration, " << r.validationSamples << " validation, "
     << r.sensitivitySamples << " sensitivity sample(s); calibration: " << escape(r.tableSource)
     << "; " << fmt(r.seconds, "%.1f") << " s.</p>";
  os << "<h2>Sensitivity, in priority order</h2><p>";
  for (const char *p : {"int8", "fp16", "bf16", "fp32"})
    os << "<span class=\"swatch\" style=\"background:" << precisionColor(p) << "\"></span>" << p;
  os << "</p>" << sensitivityChart(r);
  os << "<h2>Error before and after fallback</h2><p>Relative L2 of the outputs against the float "
     << "model: before " << fmt(r.before.relativeL2) << ", after " << fmt(r.after.relativeL2)
     << ". Light bars are predictions on the simulation library, dark ones compiled models.</p>"
     << stepsChart(r);
  os << "<h2>Activation histograms of the most sensitive layers</h2>";
  int shown = 0;
  for (size_t i : r.priority) {
    if (shown == 4)
      break;
    const TensorReport &t = r.tensors[r.layers[i].input];
    if (t.histogram.empty())
      continue;
    os << histogramChart(t, shown++);
  }
  if (!shown)
    os << "<p>No histograms (min-max calibration, or a calibration table, keeps none).</p>";
  os << "<h2>Layers</h2><table><tr><th>#</th><th>layer</th><th>op</th><th>precision</th>"
     << "<th>L2 alone int8</th><th>KL alone int8</th><th>L2 alone float</th><th>input range</th>"
     << "<th>input scale</th><th>reason</th></tr>";
  for (size_t i : r.priority) {
    const LayerReport &l = r.layers[i];
    const TensorReport &in = r.tensors[l.input];
    os << "<tr><td class=\"num\">" << l.priority << "</td><td>" << escape(l.name) << "</td><td>" << l.kind
       << "</td><td style=\"color:" << precisionColor(l.precision) << "\">" << l.precision
       << "</td><td class=\"num\">" << fmt(l.aloneInt8.relativeL2, "%.3e") << "</td><td class=\"num\">"
       << fmt(l.aloneInt8.kl, "%.3e") << "</td><td class=\"num\">" << fmt(l.aloneFloat.relativeL2, "%.3e")
       << "</td><td>[" << fmt(in.range.lo) << ", " << fmt(in.range.hi) << "]</td><td class=\"num\">"
       << fmt(in.params.scale, "%.3e") << "</td><td>" << escape(l.reason) << "</td></tr>";
  }
  os << "</table>";
  // Checked by the browser test: every chart laid out with a size.
  os << "<p id=\"render-check\"></p><script>(function(){var c=document.querySelectorAll('svg.chart');"
     << "var ok=c.length>0;c.forEach(function(e){var b=e.getBBox();if(!(b.width>0&&b.height>0))ok=false;});"
     << "document.getElementById('render-check').textContent=(ok?'rendered ':'broken ')+c.length+' charts';"
     << "})();</script></body></html>\n";
  return s;
}

} // namespace cuvil::quant
