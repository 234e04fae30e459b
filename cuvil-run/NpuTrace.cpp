//===- NpuTrace.cpp - The NPU simulator's account, drawn ------------------===//
#include "cuvil-run/NpuTrace.h"

#include "support/AtomicFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

namespace cuvil {

namespace {

const char *const kUnits[] = {"LOAD (DMA in)", "STORE (DMA out)", "MAC array", "vector unit"};
const char *const kOpcodes[] = {"?", "load", "store", "matmul", "requant", "add", "pool", "barrier"};
const char *const kColors[] = {"#999", "#4e79a7", "#59a14f", "#e15759", "#f28e2b", "#b07aa1", "#76b7b2", "#333"};

const char *opcodeName(int64_t op) { return op >= 0 && op < 8 ? kOpcodes[op] : "?"; }

/// `text` safe inside SVG text and attributes (layer names are source
/// locations and module paths: anything).
std::string xml(llvm::StringRef text) {
  std::string out;
  for (char c : text)
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '\'':
      out += "&apos;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  return out;
}

struct Event {
  int64_t unit, opcode, layer, start, end, stall, conflict, bytes;
};

std::vector<Event> eventsOf(const llvm::json::Object &segment) {
  std::vector<Event> out;
  if (const llvm::json::Array *events = segment.getArray("events"))
    for (const llvm::json::Value &v : *events) {
      const llvm::json::Array *a = v.getAsArray();
      if (!a || a->size() < 8)
        continue;
      int64_t f[8];
      for (size_t i = 0; i < 8; ++i)
        f[i] = (*a)[i].getAsInteger().value_or(0);
      out.push_back({f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]});
    }
  return out;
}

std::string layerNameOf(const llvm::json::Object &segment, int64_t layer) {
  const llvm::json::Array *layers = segment.getArray("layers");
  if (!layers || layer < 0 || static_cast<size_t>(layer) >= layers->size())
    return "";
  if (const llvm::json::Object *l = (*layers)[layer].getAsObject())
    return l->getString("name").value_or("").str();
  return "";
}

std::string chromeTrace(const llvm::json::Array &segments, const llvm::json::Value &report) {
  llvm::json::Array trace;
  for (size_t s = 0; s < segments.size(); ++s) {
    const llvm::json::Object *segment = segments[s].getAsObject();
    if (!segment)
      continue;
    double mhz = 1000;
    if (const llvm::json::Object *c = segment->getObject("config"))
      mhz = c->getNumber("clock_mhz").value_or(1000);
    std::string name = segment->getString("name").value_or("segment").str();
    trace.push_back(llvm::json::Object{{"ph", "M"}, {"name", "process_name"}, {"pid", static_cast<int64_t>(s)},
                                       {"args", llvm::json::Object{{"name", "NPU " + name}}}});
    for (int64_t u = 0; u < 4; ++u)
      trace.push_back(llvm::json::Object{{"ph", "M"}, {"name", "thread_name"}, {"pid", static_cast<int64_t>(s)},
                                         {"tid", u}, {"args", llvm::json::Object{{"name", kUnits[u]}}}});
    for (const Event &e : eventsOf(*segment)) {
      if (e.unit < 0)
        continue;
      std::string layer = layerNameOf(*segment, e.layer);
      trace.push_back(llvm::json::Object{
          {"ph", "X"},
          {"name", std::string(opcodeName(e.opcode)) + (layer.empty() ? "" : " " + layer)},
          {"pid", static_cast<int64_t>(s)},
          {"tid", e.unit},
          {"ts", e.start / mhz},
          {"dur", (e.end - e.start) / mhz},
          {"args", llvm::json::Object{{"cycles", e.end - e.start}, {"stall", e.stall},
                                      {"bank_conflict", e.conflict}, {"bytes", e.bytes}}}});
    }
  }
  llvm::json::Object root{{"traceEvents", std::move(trace)}, {"displayTimeUnit", "ns"}, {"cuvil", report}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(root)) << "\n";
  return text;
}

/// One timeline per segment: a lane per unit, a box per command (its
/// colour the command, its length its cycles), a second box per layer.
std::string svgTimeline(const llvm::json::Array &segments) {
  const double width = 1400, left = 150, laneHeight = 22, top = 40;
  std::string body;
  llvm::raw_string_ostream os(body);
  double y = top;
  for (const llvm::json::Value &v : segments) {
    const llvm::json::Object *segment = v.getAsObject();
    if (!segment)
      continue;
    std::vector<Event> events = eventsOf(*segment);
    int64_t cycles = segment->getInteger("cycles").value_or(1);
    double scale = (width - left - 20) / std::max<int64_t>(cycles, 1);
    os << llvm::formatv("<text x='10' y='{0}' class='h'>{1}: {2} cycles, MAC utilization {3:P1}, DMA hidden "
                        "{4:P1}</text>\n",
                        y - 8, xml(segment->getString("name").value_or("segment")), cycles,
                        segment->getNumber("mac_utilization").value_or(0),
                        segment->getNumber("dma_hidden").value_or(0));
    for (int u = 0; u < 4; ++u) {
      double ly = y + u * laneHeight;
      os << llvm::formatv("<text x='10' y='{0}'>{1}</text><rect x='{2}' y='{3}' width='{4}' height='{5}' "
                          "class='lane'/>\n",
                          ly + 15, kUnits[u], left, ly, width - left - 20, laneHeight - 4);
    }
    for (const Event &e : events) {
      if (e.unit < 0 || e.unit > 3)
        continue;
      double x = left + e.start * scale, w = std::max(0.5, (e.end - e.start) * scale);
      os << llvm::formatv("<rect x='{0:F2}' y='{1}' width='{2:F2}' height='{3}' fill='{4}'><title>{5} {6}: "
                          "cycles {7}..{8}, stall {9}, bank conflicts {10}, {11} bytes</title></rect>\n",
                          x, y + e.unit * laneHeight, w, laneHeight - 4, kColors[std::clamp<int64_t>(e.opcode, 0, 7)],
                          opcodeName(e.opcode), xml(layerNameOf(*segment, e.layer)), e.start, e.end,
                          e.stall, e.conflict, e.bytes);
    }
    // The layers, alternately shaded, under the lanes.
    double ly = y + 4 * laneHeight;
    if (const llvm::json::Array *layers = segment->getArray("layers"))
      for (size_t i = 0; i < layers->size(); ++i)
        if (const llvm::json::Object *l = (*layers)[i].getAsObject()) {
          int64_t s = l->getInteger("start").value_or(0), e = l->getInteger("end").value_or(0);
          os << llvm::formatv("<rect x='{0:F2}' y='{1}' width='{2:F2}' height='12' fill='{3}'><title>{4} ({5}): "
                              "{6} cycles, MAC utilization {7:P1}, roofline {8} cycles</title></rect>\n",
                              left + s * scale, ly, std::max(0.5, (e - s) * scale), i % 2 ? "#bbb" : "#ddd",
                              xml(l->getString("name").value_or("")), xml(l->getString("kind").value_or("")),
                              l->getInteger("cycles").value_or(0),
                              l->getNumber("mac_utilization").value_or(0),
                              static_cast<int64_t>(l->getNumber("roofline_cycles").value_or(0)));
        }
    os << llvm::formatv("<text x='10' y='{0}'>layers</text>\n", ly + 10);
    y += 4 * laneHeight + 60;
  }
  std::string legend;
  for (int op = 1; op < 7; ++op)
    legend += llvm::formatv("<rect x='{0}' y='10' width='12' height='12' fill='{1}'/><text x='{2}' y='21'>{3}</text>",
                            left + (op - 1) * 90, kColors[op], left + (op - 1) * 90 + 16, kOpcodes[op]);
  return llvm::formatv("<svg xmlns='http://www.w3.org/2000/svg' width='{0}' height='{1}' font-family='sans-serif' "
                       "font-size='12'>\n<style>.lane{{fill:#f4f4f4} .h{{font-weight:bold}</style>\n{2}\n{3}</svg>\n",
                       width, y, legend, body);
}

} // namespace

Status writeNpuTrace(const std::string &path, const std::string &reportJson) {
  llvm::Expected<llvm::json::Value> report = llvm::json::parse(reportJson);
  if (!report)
    return ioError("the library's NPU report is not JSON: " + llvm::toString(report.takeError()));
  const llvm::json::Object *root = report->getAsObject();
  const llvm::json::Array *segments = root ? root->getArray("segments") : nullptr;
  if (!segments)
    return ioError("the library's NPU report has no segments");
  bool svg = llvm::StringRef(path).ends_with(".svg");
  return writeFileAtomically(path, svg ? svgTimeline(*segments) : chromeTrace(*segments, *report));
}

std::string npuSummary(const std::string &reportJson) {
  llvm::Expected<llvm::json::Value> report = llvm::json::parse(reportJson);
  if (!report) {
    llvm::consumeError(report.takeError());
    return "";
  }
  const llvm::json::Object *root = report->getAsObject();
  const llvm::json::Array *segments = root ? root->getArray("segments") : nullptr;
  if (!segments)
    return "";
  std::string out;
  llvm::raw_string_ostream os(out);
  for (const llvm::json::Value &v : *segments) {
    const llvm::json::Object *s = v.getAsObject();
    if (!s)
      continue;
    os << llvm::formatv("NPU {0}: {1} cycles ({2:F1} us), MAC utilization {3:P1}, DMA {4} B in / {5} B out, "
                        "{6:P1} of DMA time hidden behind compute, {7} bank-conflict cycles\n",
                        s->getString("name").value_or("segment"), s->getInteger("cycles").value_or(0),
                        s->getNumber("time_us").value_or(0), s->getNumber("mac_utilization").value_or(0),
                        s->getInteger("load_bytes").value_or(0), s->getInteger("store_bytes").value_or(0),
                        s->getNumber("dma_hidden").value_or(0), s->getInteger("conflict_cycles").value_or(0));
  }
  return out;
}

} // namespace cuvil
