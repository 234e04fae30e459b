//===- WeightsPlan.cpp - A library's weights as made from its model -------===//
#include "driver/WeightsPlan.h"

#include "dialects/Cuvil/IR/WeightDerivations.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "support/HugePages.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

namespace mlir::cuvil {

using ::cuvil::Result;

namespace {

std::string printed(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}
std::string printed(Attribute a) {
  std::string s;
  llvm::raw_string_ostream os(s);
  a.print(os);
  return s;
}

/// The model's weights proper: floating point and 64 bytes or more.
bool isWeight(DenseResourceElementsAttr r) {
  AsmResourceBlob *blob = r.getRawHandle().getBlob();
  return blob && llvm::isa<FloatType>(r.getType().getElementType()) && blob->getData().size() >= 64;
}

::cuvil::Error planError(const std::string &why) { return ::cuvil::inputError(why); }

} // namespace

size_t WeightsPlan::derivations() const {
  return llvm::count_if(nodes, [](const Node &n) { return n.kind == Node::Kind::Derived; });
}

llvm::StringMap<DenseResourceElementsAttr> modelTensors(ModuleOp module) {
  llvm::StringMap<DenseResourceElementsAttr> tensors;
  module.walk([&](Operation *op) {
    for (NamedAttribute a : op->getAttrs())
      if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(a.getValue()))
        tensors.try_emplace(r.getRawHandle().getKey(), r);
  });
  return tensors;
}

std::string structureDigest(ModuleOp module, llvm::StringRef modelPath) {
  llvm::BLAKE3 hash;
  std::string text;
  {
    // Op by op at the top level, each in a local scope: the IR without the
    // resources' bytes (a whole module prints them all, in hex).
    llvm::raw_string_ostream os(text);
    OpPrintingFlags flags;
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false).useLocalScope();
    for (NamedAttribute a : module->getAttrs())
      os << a.getName() << "=" << a.getValue() << "\n";
    for (Operation &op : module.getBody()->getOperations()) {
      op.print(os, flags);
      os << "\n";
    }
  }
  if (!modelPath.empty() && modelPath.find_first_of("\"\\") == llvm::StringRef::npos) {
    std::string from = "\"" + modelPath.str() + "\":", to = "\"<model>\":";
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  }
  hash.update(llvm::arrayRefFromStringRef(text));
  // The tensors that are not weights, value and all, in the IR's order.
  module.walk([&](Operation *op) {
    for (NamedAttribute a : op->getAttrs())
      if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(a.getValue()); r && !isWeight(r)) {
        hash.update(llvm::arrayRefFromStringRef(r.getRawHandle().getKey()));
        if (AsmResourceBlob *blob = r.getRawHandle().getBlob())
          hash.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(blob->getData().data()),
                                              blob->getData().size()));
        hash.update(llvm::ArrayRef<uint8_t>{0});
      }
  });
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

Result<WeightsPlan> buildWeightsPlan(const WeightsTable &table, const llvm::StringMap<DenseResourceElementsAttr> &model,
                                     MLIRContext *ctx) {
  WeightDerivations *log = weightDerivations(ctx);
  if (!log)
    return planError("the cuvil dialect is not loaded");
  if (std::string why = log->valueDependence(); !why.empty())
    return planError("the code depends on the weights' values (" + why + ")");
  WeightsPlan plan;
  llvm::StringMap<size_t> byKey;
  llvm::DenseMap<Attribute, size_t> byAttr;
  std::function<Result<size_t>(Attribute, int)> visit = [&](Attribute a, int depth) -> Result<size_t> {
    if (depth > 64)
      return planError("a derivation chain deeper than 64");
    if (auto r = llvm::dyn_cast_or_null<DenseResourceElementsAttr>(a)) {
      std::string key = r.getRawHandle().getKey().str();
      if (auto it = byKey.find(key); it != byKey.end())
        return it->second;
      AsmResourceBlob *blob = r.getRawHandle().getBlob();
      if (!blob)
        return planError("the constant '" + key + "' has no bytes");
      WeightsPlan::Node node;
      node.key = key;
      node.type = printed(r.getType());
      node.bytes = blob->getData().size();
      if (std::optional<WeightDerivation> how = log->lookup(key)) {
        node.kind = WeightsPlan::Node::Kind::Derived;
        node.transform = how->transform;
        node.params = how->params;
        node.op = how->op;
        for (Attribute input : how->inputs) {
          Result<size_t> i = visit(input, depth + 1);
          if (!i)
            return i.error();
          node.inputs.push_back(*i);
        }
      } else if (auto m = model.find(key); m != model.end()) {
        node.kind = WeightsPlan::Node::Kind::Model;
        AsmResourceBlob *original = m->second.getRawHandle().getBlob();
        if (!original || original->getData().size() != node.bytes)
          return planError("the model's tensor '" + key + "' changed size in the compile");
      } else {
        return planError("the constant '" + key + "' was made by a pass that does not record how");
      }
      plan.nodes.push_back(std::move(node));
      byKey[key] = plan.nodes.size() - 1;
      return plan.nodes.size() - 1;
    }
    if (auto d = llvm::dyn_cast_or_null<DenseElementsAttr>(a)) {
      if (auto it = byAttr.find(a); it != byAttr.end())
        return it->second;
      WeightsPlan::Node node;
      node.kind = WeightsPlan::Node::Kind::Ir;
      node.type = printed(d.getType());
      node.attr = printed(a);
      plan.nodes.push_back(std::move(node));
      byAttr[a] = plan.nodes.size() - 1;
      return plan.nodes.size() - 1;
    }
    return planError("a weight whose value is neither a resource nor dense");
  };
  for (const WeightsTable::Symbol &s : table.symbols) {
    if (s.name == kModelNameSymbol) {
      plan.symbols.push_back({s.name, s.alignment, s.bytes.size(), 0, /*modelName=*/true});
      continue;
    }
    Result<size_t> node = visit(s.value, 0);
    if (!node)
      return node.error();
    plan.symbols.push_back({s.name, s.alignment, s.bytes.size(), *node});
  }
  return plan;
}

ReplayedWeights::~ReplayedWeights() {
  ::cuvil::unmapHugePages(section_, mapped_);
}

Result<std::unique_ptr<ReplayedWeights>> replayWeightsPlan(const WeightsPlan &plan,
                                                           const llvm::StringMap<DenseResourceElementsAttr> &model,
                                                           llvm::StringRef modelName, MLIRContext *ctx) {
  auto out = std::make_unique<ReplayedWeights>();
  // The section's layout: each weight at its alignment, in order.
  std::vector<uint64_t> offsets;
  uint64_t size = 0;
  for (const WeightsPlan::Symbol &s : plan.symbols) {
    if (s.modelName ? s.bytes != nameSlotBytes(modelName.size()) : s.node >= plan.nodes.size())
      return planError(s.modelName ? "the model's name does not fit the plan's slot" : "a weight of the plan names no node");
    size = (size + s.alignment - 1) / s.alignment * s.alignment;
    offsets.push_back(size);
    size += s.bytes;
  }
  if (size > 0) {
    out->section_ = ::cuvil::mapHugePages(size);
    if (!out->section_)
      return ::cuvil::ioError(std::string("cannot map ") + std::to_string(size) + " bytes for the weights: " +
                              std::strerror(errno));
    out->mapped_ = size;
  }
  // Where each node's bytes go: a weight's into its place in the section.
  std::vector<std::optional<size_t>> symbolOf(plan.nodes.size());
  for (auto [i, s] : llvm::enumerate(plan.symbols))
    if (!s.modelName && !symbolOf[s.node])
      symbolOf[s.node] = i;
  // First, on this thread (the context's parser): every node's type, its
  // place, the IR's constants, the transforms, and each node's level (a
  // derivation's is one past its inputs'). Then level by level, the nodes
  // of a level at once on the machine's cores: the copies of the model's
  // tensors, the packing and the first touch of the section's pages.
  size_t count = plan.nodes.size();
  std::vector<WeightBytes> values(count);
  std::vector<MutableArrayRef<char>> places(count);
  std::vector<const WeightTransform *> transforms(count, nullptr);
  std::vector<bool> concurrent(count, true);
  std::vector<size_t> level(count, 0);
  size_t levels = 1;
  for (size_t index = 0; index < count; ++index) {
    const WeightsPlan::Node &node = plan.nodes[index];
    RankedTensorType type = llvm::dyn_cast_or_null<RankedTensorType>(parseType(node.type, ctx));
    if (!type)
      return planError("a type of the plan does not parse");
    // The node's place: its weight's, or scratch memory.
    auto place = [&](uint64_t bytes) -> MutableArrayRef<char> {
      if (std::optional<size_t> s = symbolOf[index])
        return MutableArrayRef<char>(out->section_ + offsets[*s], bytes);
      out->scratch_.emplace_back(bytes, '\0');
      return MutableArrayRef<char>(out->scratch_.back().data(), bytes);
    };
    values[index].type = type;
    switch (node.kind) {
    case WeightsPlan::Node::Kind::Model: {
      auto m = model.find(node.key);
      AsmResourceBlob *blob = m == model.end() ? nullptr : m->second.getRawHandle().getBlob();
      if (!blob || blob->getData().size() != node.bytes)
        return planError("the model has no tensor '" + node.key + "' of " + std::to_string(node.bytes) + " bytes");
      values[index].bytes = blob->getData();
      if (symbolOf[index]) // a weight as the model has it: copied below
        places[index] = place(node.bytes);
      break;
    }
    case WeightsPlan::Node::Kind::Ir: {
      auto attr = llvm::dyn_cast_or_null<ElementsAttr>(parseAttribute(node.attr, ctx));
      FailureOr<::cuvil::Tensor> t = failure();
      if (attr)
        t = reference::tensorFromAttr(attr, UnknownLoc::get(ctx));
      if (failed(t))
        return planError("a constant of the plan does not parse");
      MutableArrayRef<char> to = place(t->byteSize());
      std::memcpy(to.data(), t->data(), t->byteSize());
      values[index].bytes = to;
      break;
    }
    case WeightsPlan::Node::Kind::Derived: {
      bool parallel = true;
      transforms[index] = lookupWeightTransform(node.transform, &parallel);
      if (!transforms[index])
        return planError("no weight transform '" + node.transform + "' in this compiler");
      concurrent[index] = parallel;
      for (size_t i : node.inputs) {
        if (i >= index)
          return planError("a derivation reads a later node");
        level[index] = std::max(level[index], level[i] + 1);
      }
      levels = std::max(levels, level[index] + 1);
      places[index] = place(node.bytes);
      break;
    }
    }
  }
  // One node's work (no context but a non-concurrent transform's).
  auto make = [&](size_t index) -> std::string {
    const WeightsPlan::Node &node = plan.nodes[index];
    if (node.kind == WeightsPlan::Node::Kind::Model) {
      if (!places[index].empty()) {
        std::memcpy(places[index].data(), values[index].bytes.data(), node.bytes);
        values[index].bytes = places[index];
      }
      return "";
    }
    if (node.kind != WeightsPlan::Node::Kind::Derived)
      return "";
    std::vector<WeightBytes> inputs;
    for (size_t i : node.inputs)
      inputs.push_back(values[i]);
    WeightDerivation how{node.transform, node.params, node.op, {}};
    if (failed((*transforms[index])(how, inputs, values[index].type, places[index], ctx)))
      return "the weight '" + node.key + "' (" + node.transform + ") cannot be made from this model";
    values[index].bytes = places[index];
    return "";
  };
  std::vector<std::string> errors(count);
  for (size_t l = 0; l < levels; ++l) {
    std::vector<size_t> shared, alone; // concurrent work, largest first; the rest
    for (size_t index = 0; index < count; ++index)
      if (level[index] == l && plan.nodes[index].kind != WeightsPlan::Node::Kind::Ir)
        (concurrent[index] ? shared : alone).push_back(index);
    std::sort(shared.begin(), shared.end(), [&](size_t a, size_t b) {
      return plan.nodes[a].bytes != plan.nodes[b].bytes ? plan.nodes[a].bytes > plan.nodes[b].bytes : a < b;
    });
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t k; (k = next.fetch_add(1)) < shared.size();)
        errors[shared[k]] = make(shared[k]);
    };
    size_t threads = std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), shared.size(), 16});
    std::vector<std::thread> pool;
    try {
      for (size_t t = 1; t < threads; ++t)
        pool.emplace_back(work);
    } catch (const std::system_error &) { // no thread to be had: fewer
    }
    work();
    for (std::thread &t : pool)
      t.join();
    for (size_t index : alone)
      errors[index] = make(index);
    for (size_t index = 0; index < count; ++index)
      if (level[index] == l && !errors[index].empty())
        return planError(errors[index]);
  }
  for (auto [i, s] : llvm::enumerate(plan.symbols)) {
    char *at = out->section_ + offsets[i];
    if (s.modelName) { // the section is zero: the name, then its padding
      std::memcpy(at, modelName.data(), modelName.size());
      out->table.symbols.push_back({s.name, s.alignment, ArrayRef<char>(at, s.bytes), Attribute()});
      continue;
    }
    ArrayRef<char> bytes = values[s.node].bytes;
    if (bytes.size() != s.bytes)
      return planError("the weight '" + s.name + "' has " + std::to_string(bytes.size()) + " bytes, the plan " +
                       std::to_string(s.bytes));
    if (bytes.data() != at) // a node two weights share
      std::memcpy(at, bytes.data(), s.bytes);
    out->table.symbols.push_back({s.name, s.alignment, ArrayRef<char>(at, s.bytes), Attribute()});
  }
  return out;
}

llvm::json::Value WeightsPlan::toJson() const {
  llvm::json::Array ns, ss;
  for (const Node &n : nodes) {
    llvm::json::Object o{{"kind", n.kind == Node::Kind::Model ? "model" : n.kind == Node::Kind::Ir ? "ir" : "derived"},
                         {"type", n.type}};
    if (n.kind != Node::Kind::Ir) {
      o["key"] = n.key;
      o["bytes"] = static_cast<int64_t>(n.bytes);
    }
    if (n.kind == Node::Kind::Ir)
      o["attr"] = n.attr;
    if (n.kind == Node::Kind::Derived) {
      o["transform"] = n.transform;
      if (!n.op.empty())
        o["op"] = n.op;
      o["params"] = llvm::json::Array(n.params);
      llvm::json::Array in;
      for (size_t i : n.inputs)
        in.push_back(static_cast<int64_t>(i));
      o["inputs"] = std::move(in);
    }
    ns.push_back(std::move(o));
  }
  for (const Symbol &s : symbols) {
    llvm::json::Object o{{"name", s.name},
                         {"alignment", static_cast<int64_t>(s.alignment)},
                         {"bytes", static_cast<int64_t>(s.bytes)}};
    if (s.modelName)
      o["model_name"] = true;
    else
      o["node"] = static_cast<int64_t>(s.node);
    ss.push_back(std::move(o));
  }
  return llvm::json::Object{{"nodes", std::move(ns)}, {"symbols", std::move(ss)}};
}

Result<WeightsPlan> WeightsPlan::fromJson(const llvm::json::Value &json) {
  auto bad = [] { return planError("a malformed weights plan"); };
  const llvm::json::Object *o = json.getAsObject();
  const llvm::json::Array *ns = o ? o->getArray("nodes") : nullptr;
  const llvm::json::Array *ss = o ? o->getArray("symbols") : nullptr;
  if (!ns || !ss)
    return bad();
  WeightsPlan plan;
  for (const llvm::json::Value &v : *ns) {
    const llvm::json::Object *n = v.getAsObject();
    if (!n)
      return bad();
    Node node;
    std::optional<llvm::StringRef> kind = n->getString("kind"), type = n->getString("type");
    if (!kind || !type)
      return bad();
    node.type = type->str();
    if (*kind == "ir") {
      node.kind = Node::Kind::Ir;
      std::optional<llvm::StringRef> attr = n->getString("attr");
      if (!attr)
        return bad();
      node.attr = attr->str();
    } else {
      node.kind = *kind == "model" ? Node::Kind::Model : Node::Kind::Derived;
      if (*kind != "model" && *kind != "derived")
        return bad();
      std::optional<llvm::StringRef> key = n->getString("key");
      std::optional<int64_t> bytes = n->getInteger("bytes");
      if (!key || !bytes || *bytes < 0)
        return bad();
      node.key = key->str();
      node.bytes = static_cast<uint64_t>(*bytes);
    }
    if (node.kind == Node::Kind::Derived) {
      std::optional<llvm::StringRef> transform = n->getString("transform");
      const llvm::json::Array *params = n->getArray("params"), *inputs = n->getArray("inputs");
      if (!transform || !params || !inputs)
        return bad();
      node.transform = transform->str();
      if (std::optional<llvm::StringRef> op = n->getString("op"))
        node.op = op->str();
      for (const llvm::json::Value &p : *params) {
        std::optional<int64_t> i = p.getAsInteger();
        if (!i)
          return bad();
        node.params.push_back(*i);
      }
      for (const llvm::json::Value &p : *inputs) {
        std::optional<int64_t> i = p.getAsInteger();
        if (!i || *i < 0 || static_cast<size_t>(*i) >= plan.nodes.size())
          return bad();
        node.inputs.push_back(static_cast<size_t>(*i));
      }
    }
    plan.nodes.push_back(std::move(node));
  }
  for (const llvm::json::Value &v : *ss) {
    const llvm::json::Object *s = v.getAsObject();
    std::optional<llvm::StringRef> name = s ? s->getString("name") : std::nullopt;
    std::optional<int64_t> alignment = s ? s->getInteger("alignment") : std::nullopt;
    std::optional<int64_t> bytes = s ? s->getInteger("bytes") : std::nullopt;
    std::optional<int64_t> node = s ? s->getInteger("node") : std::nullopt;
    bool modelName = s && s->getBoolean("model_name").value_or(false);
    if (!name || !alignment || *alignment < 1 || (*alignment & (*alignment - 1)) || !bytes || *bytes < 0 ||
        (!modelName && (!node || *node < 0 || static_cast<size_t>(*node) >= plan.nodes.size())))
      return bad();
    plan.symbols.push_back({name->str(), static_cast<uint64_t>(*alignment), static_cast<uint64_t>(*bytes),
                            modelName ? 0 : static_cast<size_t>(*node), modelName});
  }
  return plan;
}

} // namespace mlir::cuvil
