//===- TuneReport.cpp - cuvil-autotune's HTML report ----------------------===//
//
// Plain C++ (no LLVM, no MLIR). The look follows cuvil-quantize's report
// (quantize/QuantizeReport.cpp): same fonts, table and chart styles.
//
//===----------------------------------------------------------------------===//
#include "cuvil-autotune/TuneReport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace cuvil::tuning {
namespace {

/// Appends text; numbers go through the helpers below, never a locale.
struct Out {
  std::string s;
  Out &operator<<(const std::string &t) {
    s += t;
    return *this;
  }
  Out &operator<<(const char *t) {
    s += t;
    return *this;
  }
  Out &operator<<(char c) {
    s += c;
    return *this;
  }
  Out &operator<<(int v) {
    s += std::to_string(v);
    return *this;
  }
  Out &operator<<(size_t v) {
    s += std::to_string(v);
    return *this;
  }
};

std::string fmt(double v, const char *f) {
  if (!std::isfinite(v))
    return std::isnan(v) ? "n/a" : "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// A coordinate in an SVG.
std::string px(double v) { return fmt(v, "%.1f"); }

/// A time in ms, with a precision fixed by its magnitude; 0 (not set) and
/// negative (failed) are n/a.
std::string ms(double v) {
  if (!std::isfinite(v) || v <= 0)
    return "n/a";
  if (v < 0.1)
    return fmt(v, "%.4f");
  if (v < 10)
    return fmt(v, "%.3f");
  if (v < 1000)
    return fmt(v, "%.2f");
  return fmt(v, "%.1f");
}

std::string escape(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

/// Shapes that wrap only between operands: "a, b -> c" as "a," "b" "-> c".
std::string shapesCell(const std::string &shapes) {
  std::vector<std::string> words;
  size_t at = 0;
  while (at < shapes.size()) {
    size_t end = shapes.find(' ', at);
    if (end == std::string::npos)
      end = shapes.size();
    if (end > at) {
      std::string w = shapes.substr(at, end - at);
      if (!words.empty() && words.back() == "->")
        words.back() += " " + w;
      else
        words.push_back(w);
    }
    at = end + 1;
  }
  std::string out;
  for (const std::string &w : words)
    out += (out.empty() ? "" : " ") + std::string("<span class=\"nw\">") + escape(w) + "</span>";
  return out;
}

bool validMs(double v) { return std::isfinite(v) && v > 0; }

/// baseline / best, or NaN where either is missing.
double speedup(const KernelTuneResult &k) {
  if (!validMs(k.baselineMs) || !validMs(k.bestMs))
    return std::numeric_limits<double>::quiet_NaN();
  return k.baselineMs / k.bestMs;
}

bool improved(const KernelTuneResult &k) {
  double s = speedup(k);
  return std::isfinite(s) && s > 1.02;
}

/// The points of a kernel's curve that can be plotted: (trial, ms).
std::vector<std::pair<int, double>> curvePoints(const KernelTuneResult &k) {
  std::vector<std::pair<int, double>> pts;
  for (size_t i = 0; i < k.bestSoFarMs.size(); ++i)
    if (validMs(k.bestSoFarMs[i]))
      pts.push_back({int(i) + 1, k.bestSoFarMs[i]});
  return pts;
}

bool charted(const KernelTuneResult &k) { return !k.fromDatabase && curvePoints(k).size() >= 2; }

/// 1, 2, 2.5 or 5 times a power of ten, at least `raw`.
double niceStep(double raw) {
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (m * p >= raw * (1 - 1e-9))
      return m * p;
  return 10 * p;
}

/// Decimals enough to tell ticks `step` apart.
int tickDecimals(double step) {
  int d = 0;
  while (d < 6 && std::fabs(step * std::pow(10.0, d) - std::round(step * std::pow(10.0, d))) > 1e-6)
    ++d;
  return d;
}

/// Best time so far against trials, the baseline dashed.
std::string curveChart(const KernelTuneResult &k, size_t id) {
  std::vector<std::pair<int, double>> pts = curvePoints(k);
  int n = int(k.bestSoFarMs.size());
  const int width = 360, height = 190, left = 58, right = 64, top = 18, bottom = 150;
  const int plotW = width - left - right;
  bool hasBase = validMs(k.baselineMs);
  double lo = pts.front().second, hi = lo;
  for (const auto &p : pts) {
    lo = std::min(lo, p.second);
    hi = std::max(hi, p.second);
  }
  if (hasBase) {
    lo = std::min(lo, k.baselineMs);
    hi = std::max(hi, k.baselineMs);
  }
  if (hi - lo < hi * 1e-6) { // a flat curve: give it some room
    lo -= hi * 0.05;
    hi += hi * 0.05;
  } else { // and keep the extremes off the axis lines
    double pad = (hi - lo) * 0.04;
    lo -= pad;
    hi += pad;
  }
  double step = niceStep((hi - lo) / 4);
  double axisLo = std::floor(lo / step + 1e-9) * step, axisHi = std::ceil(hi / step - 1e-9) * step;
  if (axisLo < 0)
    axisLo = 0;
  if (axisHi <= axisLo)
    axisHi = axisLo + step;
  int decimals = tickDecimals(step);
  char tickFmt[16];
  std::snprintf(tickFmt, sizeof tickFmt, "%%.%df", decimals);

  auto x = [&](double trial) { return left + (n > 1 ? (trial - 1) / (n - 1) : 0.5) * plotW; };
  auto y = [&](double v) { return bottom - (v - axisLo) / (axisHi - axisLo) * (bottom - top); };

  Out os;
  os << "<svg class=\"chart curve\" id=\"curve" << id << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
     << width << "\" height=\"" << height << "\" role=\"img\"><title>" << escape(k.layer)
     << ": best time so far against trials</title>";
  // axes
  os << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"" << top << "\" y2=\"" << bottom
     << "\" stroke=\"#555\"/><line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << bottom
     << "\" y2=\"" << bottom << "\" stroke=\"#555\"/>";
  // y ticks, in ms
  int yTicks = int(std::lround((axisHi - axisLo) / step));
  for (int t = 0; t <= yTicks; ++t) {
    double v = axisLo + t * step;
    os << "<line x1=\"" << left - 3 << "\" x2=\"" << left + plotW << "\" y1=\"" << px(y(v)) << "\" y2=\""
       << px(y(v)) << "\" stroke=\"" << (t ? "#eee" : "#555") << "\"/>";
    os << "<text x=\"" << left - 5 << "\" y=\"" << px(y(v) + 4) << "\" text-anchor=\"end\" class=\"axis\">"
       << fmt(v, tickFmt) << "</text>";
  }
  os << "<text x=\"" << left - 5 << "\" y=\"" << top - 6 << "\" text-anchor=\"end\" class=\"axis\">ms</text>";
  // x ticks, in trials
  int xStep = 1;
  for (int m : {1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000}) {
    xStep = m;
    if ((n - 1) / m + 1 <= 8)
      break;
  }
  while ((n - 1) / xStep + 1 > 8)
    xStep *= 10;
  // 1, 3, 5, ... or 1, 5, 10, ...: the first trial always labelled
  for (int t = 1; t <= n; t = (t == 1 && xStep > 2) ? xStep : t + xStep)
    os << "<line x1=\"" << px(x(t)) << "\" x2=\"" << px(x(t)) << "\" y1=\"" << bottom << "\" y2=\""
       << bottom + 3 << "\" stroke=\"#555\"/><text x=\"" << px(x(t)) << "\" y=\"" << bottom + 15
       << "\" text-anchor=\"middle\" class=\"axis\">" << t << "</text>";
  os << "<text x=\"" << left + plotW / 2 << "\" y=\"" << bottom + 32
     << "\" text-anchor=\"middle\" class=\"axis\">trials</text>";
  // the baseline
  if (hasBase) {
    double b = y(k.baselineMs);
    os << "<line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << px(b) << "\" y2=\"" << px(b)
       << "\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"><title>baseline " << escape(k.baselineChoice)
       << ": " << ms(k.baselineMs) << " ms</title></line><text x=\"" << left + plotW + 4 << "\" y=\""
       << px(b + 4) << "\" class=\"axis\" fill=\"#c0392b\">baseline</text>";
  }
  // the curve: best so far only changes at a trial, so it is drawn as steps
  os << "<polyline fill=\"none\" stroke=\"#2b7bba\" stroke-width=\"2\" points=\"";
  for (size_t i = 0; i < pts.size(); ++i) {
    if (i)
      os << ' ' << px(x(pts[i].first)) << ',' << px(y(pts[i - 1].second));
    os << (i ? " " : "") << px(x(pts[i].first)) << ',' << px(y(pts[i].second));
  }
  os << "\"/>";
  if (pts.size() <= 60)
    for (size_t i = 0; i < pts.size(); ++i)
      os << "<circle cx=\"" << px(x(pts[i].first)) << "\" cy=\"" << px(y(pts[i].second)) << "\" r=\"2.5\" fill=\""
         << (i == 0 || pts[i].second < pts[i - 1].second ? "#2b7bba" : "#9db9d3") << "\"><title>trial "
         << pts[i].first << ": " << ms(pts[i].second) << " ms</title></circle>";
  const auto &last = pts.back();
  double valueY = y(last.second);
  if (hasBase && std::fabs(valueY - y(k.baselineMs)) < 12) // keep clear of the "baseline" label
    valueY = y(k.baselineMs) + (valueY <= y(k.baselineMs) ? -12 : 12);
  os << "<text x=\"" << left + plotW + 4 << "\" y=\"" << px(valueY + 4) << "\" class=\"value\">"
     << ms(last.second) << "</text>";
  os << "</svg>";
  return os.s;
}

/// Why a kernel has no chart.
std::string noChartText(const KernelTuneResult &k) {
  if (k.fromDatabase)
    return "From the tuning database: nothing measured, " + escape(k.bestChoice) + " at " + ms(k.bestMs) +
           " ms.";
  std::vector<std::pair<int, double>> pts = curvePoints(k);
  if (pts.size() == 1)
    return "One point only: " + ms(pts.front().second) + " ms after trial " + std::to_string(pts.front().first) +
           ", nothing to plot.";
  return "No measurement to plot.";
}

std::string candidatesList(const KernelTuneResult &k) {
  std::vector<std::pair<std::string, double>> c = k.candidates;
  // fastest first, the failed last, ties in their given order
  std::stable_sort(c.begin(), c.end(), [](const auto &a, const auto &b) {
    bool af = !(a.second >= 0) || !std::isfinite(a.second), bf = !(b.second >= 0) || !std::isfinite(b.second);
    if (af != bf)
      return bf;
    return !af && a.second < b.second;
  });
  Out os;
  os << "<table class=\"candidates\"><tr><th>candidate</th><th>median ms</th></tr>";
  for (const auto &[choice, t] : c) {
    bool failed = !(t >= 0) || !std::isfinite(t);
    os << "<tr" << (choice == k.bestChoice ? " class=\"best\"" : "") << "><td>" << escape(choice)
       << "</td><td class=\"num\">" << (failed ? std::string("<span class=\"failed\">failed</span>") : ms(t))
       << "</td></tr>";
  }
  os << "</table>";
  return os.s;
}

} // namespace

std::string renderTuneReportHtml(const TuneReportData &r) {
  // the table's (and the charts') order: most time saved first
  std::vector<size_t> order(r.kernels.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  auto saved = [&](size_t i) {
    const KernelTuneResult &k = r.kernels[i];
    return std::isfinite(speedup(k)) ? k.baselineMs - k.bestMs : -std::numeric_limits<double>::infinity();
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return saved(a) > saved(b); });

  size_t measured = 0, fromDb = 0, better = 0, timed = 0;
  double totalBase = 0, totalBest = 0;
  for (const KernelTuneResult &k : r.kernels) {
    (k.fromDatabase ? fromDb : measured)++;
    better += improved(k);
    if (std::isfinite(speedup(k))) {
      ++timed;
      totalBase += k.baselineMs;
      totalBest += k.bestMs;
    }
  }
  double ratio = totalBest > 0 ? totalBase / totalBest : std::numeric_limits<double>::quiet_NaN();

  Out os;
  os << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>cuvil-autotune: "
     << escape(r.model) << "</title><style>"
     << "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}"
     << "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
     << ".verdict{padding:8px 12px;border-radius:4px;display:inline-block;font-weight:600}"
     << ".pass{background:#dff0d8;color:#2d6a2d}.neutral{background:#eee;color:#444}"
     << "table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;"
     << "vertical-align:top}"
     << "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
     << "table.gains{font-size:13px}table.gains td,table.gains th{padding:3px 6px}"
     << "table.gains td.layer{overflow-wrap:anywhere;min-width:80px}td.choice,td.op{white-space:nowrap}"
     << "tr.gain td{background:#dff0d8}tr.gain td.speedup{color:#2d6a2d;font-weight:600}"
     << "td.shapes{font-size:11px;font-family:ui-monospace,monospace;color:#444}.nw{white-space:nowrap}"
     << "a{color:#2b7bba;text-decoration:none}a:hover{text-decoration:underline}"
     << "svg text{font-size:11px}.axis{fill:#555}.value{fill:#333}"
     << ".kbox{display:inline-block;vertical-align:top;width:360px;margin:8px 14px 8px 0}"
     << ".kbox h3{font-size:14px;margin:0 0 2px;word-break:break-all}"
     << ".kbox p{margin:2px 0;font-size:12px;color:#444}.kbox p.nochart{padding:8px 0;color:#666}"
     << "code.sig{display:block;font-size:11px;word-break:break-all;background:#f6f6f6;padding:4px}"
     << "details{font-size:12px;margin-top:4px}table.candidates td,table.candidates th{padding:1px 6px}"
     << "table.candidates tr.best td{font-weight:600}.failed{color:#c0392b}"
     << "</style></head><body>";

  os << "<h1>cuvil-autotune report: " << escape(r.model) << "</h1>";
  os << "<p>Device <b>" << escape(r.device) << "</b>, target <b>" << escape(r.target) << "</b>, compiler <b>"
     << escape(r.compilerVersion) << "</b>; " << fmt(r.seconds, "%.1f") << " s wall time, " << r.measurements
     << " measurement(s), " << r.threads << " thread(s).</p>";

  // the summary
  os << "<h2>Summary</h2><p class=\"summary\">";
  if (std::isfinite(ratio))
    os << "<span class=\"verdict " << (ratio > 1.02 ? "pass" : "neutral") << "\" id=\"ratio\">"
       << fmt(ratio, "%.2f") << "x faster</span> ";
  os << r.kernels.size() << " kernel(s): " << measured << " tuned, " << fromDb << " from the database; "
     << better << " improved by more than 2%.";
  if (timed)
    os << " Total of " << timed << " kernel(s): baseline " << ms(totalBase) << " ms, tuned " << ms(totalBest)
       << " ms per call (ratio " << fmt(ratio, "%.2f") << "x).";
  os << "</p>";

  if (r.kernels.empty()) {
    os << "<p>No kernels tuned.</p></body></html>\n";
    return os.s;
  }

  // the gains
  os << "<h2>Gains per layer, by time saved</h2><table class=\"gains\"><tr><th class=\"num\">#</th>"
     << "<th>layer</th><th>op</th><th>shapes</th><th>baseline</th><th class=\"num\">ms</th><th>best</th>"
     << "<th class=\"num\">ms</th><th class=\"num\">speedup</th><th class=\"num\">spread</th>"
     << "<th class=\"num\">trials</th><th>note</th></tr>";
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const KernelTuneResult &k = r.kernels[order[pos]];
    double s = speedup(k);
    os << "<tr class=\"kernel" << (improved(k) ? " gain" : "") << "\"><td class=\"num\">" << pos + 1
       << "</td><td class=\"layer\"><a href=\"#k" << pos + 1 << "\" title=\"" << escape(k.signature) << "\">" << escape(k.layer)
       << "</a></td><td class=\"op\">" << escape(k.op) << "</td><td class=\"shapes\">" << shapesCell(k.shapes)
       << "</td><td class=\"choice\">" << escape(k.baselineChoice) << "</td><td class=\"num\">" << ms(k.baselineMs)
       << "</td><td class=\"choice\">" << escape(k.bestChoice) << "</td><td class=\"num\">" << ms(k.bestMs)
       << "</td><td class=\"num speedup\">" << (std::isfinite(s) ? fmt(s, "%.2f") + "x" : std::string("n/a"))
       << "</td><td class=\"num\">"
       << (k.fromDatabase && k.spreadPct == 0 ? std::string("&ndash;") : fmt(k.spreadPct, "%.1f") + "%")
       << "</td><td class=\"num\">" << (k.fromDatabase ? std::string("database") : std::to_string(k.trials))
       << "</td><td>" << escape(k.note) << "</td></tr>";
  }
  os << "</table>";

  // the curves
  os << "<h2>Best time so far against trials</h2><p>The blue steps are the best median after each "
     << "trial, the dashed red line the baseline's.</p>";
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const KernelTuneResult &k = r.kernels[order[pos]];
    os << "<div class=\"kbox\" id=\"k" << pos + 1 << "\"><h3>" << pos + 1 << ". " << escape(k.layer)
       << "</h3><p>" << escape(k.op) << (k.op.empty() ? "" : ": ") << escape(k.baselineChoice) << " " << ms(k.baselineMs) << " ms &rarr; "
       << escape(k.bestChoice) << " " << ms(k.bestMs) << " ms</p>";
    if (charted(k))
      os << curveChart(k, pos + 1);
    else
      os << "<p class=\"nochart\">" << noChartText(k) << "</p>";
    os << "<details><summary>signature and candidates</summary><code class=\"sig\">" << escape(k.signature)
       << "</code>";
    if (!k.candidates.empty())
      os << candidatesList(k);
    os << "</details></div>";
  }
  os << "</body></html>\n";
  return os.s;
}

} // namespace cuvil::tuning
