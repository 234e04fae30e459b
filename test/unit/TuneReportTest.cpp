//===- TuneReportTest.cpp - cuvil-autotune's HTML report ------------------===//
#include "CatchCompat.h"

#include "cuvil-autotune/TuneReport.h"

#include <string>

using namespace cuvil::tuning;

namespace {

size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size()))
    ++n;
  return n;
}

TuneReportData sample() {
  TuneReportData d;
  d.model = "resnet18.onnx";
  d.device = "Intel(R) Xeon(R) <test>";
  d.target = "x86_64-unknown-linux-gnu";
  d.compilerVersion = "cuvil 0.9.0";
  d.seconds = 12.345;
  d.measurements = 42;
  d.threads = 8;

  KernelTuneResult a;
  a.layer = "layer1.0.conv1<script>&\"";
  a.op = "cuvil.conv.conv2d";
  a.signature = "conv2d|in=1x64x56x56xf32|w=64x64x3x3xf32|stride=1|pad=1|<key>";
  a.shapes = "1x64x56x56xf32, 64x64x3x3xf32 -> 1x64x56x56xf32";
  a.baselineChoice = "conv2d/im2col";
  a.bestChoice = "conv2d/winograd_f4x4";
  a.baselineMs = 3.0;
  a.bestMs = 1.5;
  a.spreadPct = 1.25;
  a.trials = 5;
  a.bestSoFarMs = {3.0, 2.4, 2.4, 1.7, 1.5};
  a.candidates = {{"conv2d/im2col", 3.0}, {"conv2d/direct", 2.4}, {"conv2d/winograd_f2x2", 1.7},
                  {"conv2d/winograd_f4x4", 1.5}, {"conv2d/broken", -1}};
  a.note = "1 crashed: signal 11";

  KernelTuneResult b;
  b.layer = "model.py:17";
  b.op = "cuvil.linalg.matmul";
  b.signature = "matmul|1x512|512x1000";
  b.shapes = "1x512xf32, 512x1000xf32 -> 1x1000xf32";
  b.baselineChoice = "matmul/tiled";
  b.bestChoice = "matmul/tiled";
  b.baselineMs = 0.5;
  b.bestMs = 0.5;
  b.fromDatabase = true;
  b.bestSoFarMs = {0.5};

  // the database kernel first: the table must put the bigger saving first
  d.kernels = {b, a};
  return d;
}

} // namespace

TEST_CASE("tune report: escaping", "[autotune][report]") {
  std::string html = renderTuneReportHtml(sample());
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("conv1<script>") == std::string::npos);
  CHECK(html.find("layer1.0.conv1&lt;script&gt;&amp;&quot;") != std::string::npos);
  CHECK(html.find("<key>") == std::string::npos);
  CHECK(html.find("&lt;key&gt;") != std::string::npos);
  CHECK(html.find("Intel(R) Xeon(R) &lt;test&gt;") != std::string::npos);
  CHECK(html.find("<span class=\"nw\">-&gt; 1x64x56x56xf32</span>") != std::string::npos);
  // every quote in an attribute is escaped: the signature sits in a title
  CHECK(html.find("title=\"conv2d|in=1x64x56x56xf32|w=64x64x3x3xf32|stride=1|pad=1|&lt;key&gt;\"") !=
        std::string::npos);
}

TEST_CASE("tune report: one chart per measured kernel", "[autotune][report]") {
  std::string html = renderTuneReportHtml(sample());
  CHECK(count(html, "<svg") == 1);
  CHECK(html.find("From the tuning database") != std::string::npos);
  // the baseline dashed, the axes labelled in ms and trials
  CHECK(html.find("stroke-dasharray") != std::string::npos);
  CHECK(html.find(">ms</text>") != std::string::npos);
  CHECK(html.find(">trials</text>") != std::string::npos);
  CHECK(html.find(">5</text>") != std::string::npos);

  // a single point gets a text, not a chart
  TuneReportData d = sample();
  d.kernels[1].bestSoFarMs = {1.5};
  CHECK(count(renderTuneReportHtml(d), "<svg") == 0);
}

TEST_CASE("tune report: the gains table", "[autotune][report]") {
  std::string html = renderTuneReportHtml(sample());
  CHECK(count(html, "<tr class=\"kernel") == 2);
  CHECK(count(html, "<tr class=\"kernel gain\"") == 1);
  // sorted by time saved: the conv (1.5 ms saved) before the matmul (none)
  size_t conv = html.find("<tr class=\"kernel gain\"><td class=\"num\">1</td>");
  size_t matmul = html.find("<tr class=\"kernel\"><td class=\"num\">2</td>");
  REQUIRE(conv != std::string::npos);
  REQUIRE(matmul != std::string::npos);
  CHECK(conv < matmul);
  CHECK(html.find("model.py:17", conv) > matmul);
  CHECK(html.find(">2.00x<") != std::string::npos);   // the conv's speedup
  CHECK(html.find(">database<") != std::string::npos); // the matmul's trials
}

TEST_CASE("tune report: the summary's ratio", "[autotune][report]") {
  std::string html = renderTuneReportHtml(sample());
  // 3.5 ms before, 2.0 ms after
  CHECK(html.find("baseline 3.500 ms, tuned 2.000 ms per call (ratio 1.75x)") != std::string::npos);
  CHECK(html.find("1.75x faster") != std::string::npos);
  CHECK(html.find("2 kernel(s): 1 tuned, 1 from the database; 1 improved") != std::string::npos);
  CHECK(html.find("12.3 s wall time, 42 measurement(s), 8 thread(s)") != std::string::npos);
}

TEST_CASE("tune report: deterministic", "[autotune][report]") {
  TuneReportData d = sample();
  CHECK(renderTuneReportHtml(d) == renderTuneReportHtml(d));
  CHECK(renderTuneReportHtml(sample()) == renderTuneReportHtml(d));
}

TEST_CASE("tune report: no kernels", "[autotune][report]") {
  TuneReportData d = sample();
  d.kernels.clear();
  std::string html = renderTuneReportHtml(d);
  CHECK(html.find("No kernels tuned.") != std::string::npos);
  CHECK(count(html, "<svg") == 0);
  CHECK(html.find("</html>") != std::string::npos);
}
