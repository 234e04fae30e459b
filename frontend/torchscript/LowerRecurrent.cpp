//===- LowerRecurrent.cpp - aten::lstm/gru/rnn_* as unrolled cells --------===//
//
// PyTorch's recurrent layers call one fused operator per module. Here each
// becomes its cells, unrolled over the (static) sequence length, with the
// cell math of ATen's RNN.cpp: the input projection of every time step is
// one linear over the whole sequence, then per step a linear on the hidden
// state, the gate nonlinearities and the state update. Unrolling keeps the
// graph in plain cuvil ops that later passes fuse; very long sequences make
// big graphs, so the step count is capped. Dynamically quantized layers
// (aten::quantized_lstm/gru with CellParamsBase weights) are the same
// cells with each projection a quantized::linear_dynamic, which quantizes
// its input by its own range: the whole sequence at once for the input
// projection, the hidden state at each step.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/Interpreter.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/BuiltinTypes.h"

namespace cir = mlir::cuvil;

namespace cuvil::torchscript {
namespace {

using mlir::RankedTensorType;
using mlir::Value;

enum class Cell { LSTM, GRU, RNNTanh, RNNRelu };

const char *cellName(Cell c) {
  switch (c) {
  case Cell::LSTM: return "lstm";
  case Cell::GRU: return "gru";
  case Cell::RNNTanh: return "rnn_tanh";
  case Cell::RNNRelu: return "rnn_relu";
  }
  return "";
}
int64_t gateCount(Cell c) { return c == Cell::LSTM ? 4 : c == Cell::GRU ? 3 : 1; }

/// Unrolled time steps (layers x directions x sequence length) above which
/// the import is refused rather than building a graph of millions of ops.
constexpr int64_t kMaxUnrolledSteps = 16384;

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

struct Builder {
  Interpreter &in;
  mlir::OpBuilder &b;

  Value select(Value x, int64_t dim, int64_t index) {
    return in.build<cir::SelectOp>(x, b.getI64IntegerAttr(dim), b.getI64IntegerAttr(index));
  }
  Value slice(Value x, int64_t dim, int64_t start, int64_t end) {
    return in.build<cir::SliceOp>(x, b.getI64IntegerAttr(dim), b.getI64IntegerAttr(start),
                                  b.getI64IntegerAttr(end), b.getI64IntegerAttr(1));
  }
  Value unsqueeze(Value x, int64_t dim) { return in.build<cir::UnsqueezeOp>(x, b.getI64IntegerAttr(dim)); }
  Value concat(llvm::ArrayRef<Value> xs, int64_t dim) {
    if (xs.size() == 1)
      return xs[0];
    return in.build<cir::ConcatOp>(mlir::ValueRange(xs), b.getI64IntegerAttr(dim));
  }
  Value stack(llvm::ArrayRef<Value> xs) {
    llvm::SmallVector<Value> parts;
    for (Value x : xs)
      parts.push_back(unsqueeze(x, 0));
    return concat(parts, 0);
  }
  Value transpose01(Value x) {
    return in.build<cir::TransposeOp>(x, b.getI64IntegerAttr(0), b.getI64IntegerAttr(1));
  }
  Value linear(Value x, Value w, Value bias) { return in.build<cir::LinearOp>(x, w, bias); }
  Value add(Value x, Value y) { return in.build<cir::AddOp>(x, y); }
  Value sub(Value x, Value y) { return in.build<cir::SubOp>(x, y); }
  Value mul(Value x, Value y) { return in.build<cir::MulOp>(x, y); }
  Value sigmoid(Value x) { return in.build<cir::SigmoidOp>(x); }
  Value tanh(Value x) { return in.build<cir::TanhOp>(x); }
  Value relu(Value x) { return in.build<cir::ReluOp>(x); }
};

/// One step of `cell` from its projected input `xt` and hidden state `ht`
/// (ATen's RNN.cpp): updates `h` (and `c` for an LSTM).
void cellStep(Builder &B, Cell cell, int64_t hidden, Value xt, Value ht, Value &h, Value &c) {
  auto gate = [&](Value g, int64_t k) { return B.slice(g, 1, k * hidden, (k + 1) * hidden); };
  switch (cell) {
  case Cell::LSTM: {
    Value g = B.add(xt, ht);
    Value i = B.sigmoid(gate(g, 0)), f = B.sigmoid(gate(g, 1));
    Value cand = B.tanh(gate(g, 2)), o = B.sigmoid(gate(g, 3));
    c = B.add(B.mul(f, c), B.mul(i, cand));
    h = B.mul(o, B.tanh(c));
    break;
  }
  case Cell::GRU: {
    Value r = B.sigmoid(B.add(gate(xt, 0), gate(ht, 0)));
    Value z = B.sigmoid(B.add(gate(xt, 1), gate(ht, 1)));
    Value n = B.tanh(B.add(gate(xt, 2), B.mul(r, gate(ht, 2))));
    h = B.add(n, B.mul(z, B.sub(h, n))); // ATen: n + z * (h - n)
    break;
  }
  case Cell::RNNTanh:
    h = B.tanh(B.add(xt, ht));
    break;
  case Cell::RNNRelu:
    h = B.relu(B.add(xt, ht));
    break;
  }
}

/// Weights of one (layer, direction): ATen's flat order is w_ih, w_hh, then
/// b_ih, b_hh when the module has biases; a dynamically quantized layer's
/// packed projections (biases inside) instead.
struct CellWeights {
  Value wIh, wHh, bIh, bHh;
  const IValue *packedIh = nullptr, *packedHh = nullptr;
  bool reduceRange = false;
};

IValue lowerRecurrent(Interpreter &in, const BoundArgs &args, Cell cell, bool quantized) {
  std::string opName = std::string(quantized ? "aten::quantized_" : "aten::") + cellName(cell);
  if (!args.has("batch_first"))
    return in.unsupported(std::string("aten::") + cellName(cell) +
                          " on a packed sequence (pack_padded_sequence)");
  auto tensorArg = [&](const char *name) {
    const IValue &v = args.get(name);
    if (!v.isTensor())
      in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a tensor");
    return v.tensor->value;
  };
  auto tensorList = [&](const char *name) {
    const IValue &v = args.get(name);
    std::vector<Value> out;
    if (!v.isSequence())
      in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a list of tensors");
    for (const IValue &x : *v.list) {
      if (!x.isTensor())
        in.fail("CUVIL-E-IMPORT-TYPE", std::string("argument '") + name + "' must be a list of tensors");
      out.push_back(x.tensor->value);
    }
    return out;
  };
  bool hasBiases = args.get("has_biases").b, bidirectional = args.get("bidirectional").b;
  bool batchFirst = args.get("batch_first").b;
  int64_t layers = args.get("num_layers").i, dirs = bidirectional ? 2 : 1;
  if (args.get("train").b && args.get("dropout").f > 0 && layers > 1)
    return in.unsupported(std::string("aten::") + cellName(cell) + " with dropout in training mode");
  if (layers < 1)
    in.fail("CUVIL-E-IMPORT-RAISE", "num_layers must be at least 1");

  Value input = tensorArg("input");
  std::vector<Value> params;
  std::vector<const IValue *> cells; // quantized: one CellParamsBase per (layer, direction)
  if (quantized) {
    const IValue &v = args.get("params");
    if (!v.isSequence())
      in.fail("CUVIL-E-IMPORT-TYPE", opName + ": argument 'params' must be a list of cell weights");
    for (const IValue &x : *v.list) {
      if (x.is(IValue::Kind::Poison))
        return x;
      if (!x.is(IValue::Kind::Object) || !x.object->native ||
          x.object->className != "__torch__.torch.classes.rnn.CellParamsBase")
        in.fail("CUVIL-E-IMPORT-TYPE", opName + ": argument 'params' must be a list of "
                                                "torch.classes.rnn.CellParamsBase, got " + x.typeName());
      cells.push_back(&x);
    }
    if (args.has("use_dynamic") && !args.get("use_dynamic").b)
      return in.unsupported(opName + " without use_dynamic (static quantized recurrent layers)");
  } else {
    params = tensorList("params");
  }
  std::vector<Value> hx;
  if (cell == Cell::LSTM)
    hx = tensorList("hx");
  else
    hx.push_back(tensorArg("hx"));

  size_t perCell = hasBiases ? 4 : 2;
  if (quantized) {
    if (cells.size() != static_cast<size_t>(layers * dirs))
      in.fail("CUVIL-E-IMPORT-RAISE", opName + " expects " + std::to_string(layers * dirs) +
                                          " cell weights, got " + std::to_string(cells.size()));
  } else {
    if (params.size() == static_cast<size_t>(layers * dirs) * (perCell + 1))
      return in.unsupported("aten::lstm with proj_size (projected hidden state)");
    if (params.size() != static_cast<size_t>(layers * dirs) * perCell)
      in.fail("CUVIL-E-IMPORT-RAISE", std::string("aten::") + cellName(cell) + " expects " +
                                          std::to_string(layers * dirs * perCell) +
                                          " weight tensors, got " + std::to_string(params.size()));
  }
  if (hx.size() != (cell == Cell::LSTM ? 2u : 1u))
    in.fail("CUVIL-E-IMPORT-RAISE", "aten::lstm expects hx = [h0, c0]");

  RankedTensorType inType = typeOf(input);
  if (inType.getRank() != 3)
    in.fail("CUVIL-E-IMPORT-SHAPE", std::string("aten::") + cellName(cell) +
                                        " expects a 3-D input, got rank " +
                                        std::to_string(inType.getRank()));
  int64_t steps = inType.getDimSize(batchFirst ? 1 : 0);
  if (mlir::ShapedType::isDynamic(steps))
    return in.unsupported(std::string("aten::") + cellName(cell) +
                          " over a dynamic sequence length (give the sequence dimension a fixed "
                          "size in --input-shape)");
  if (steps < 1)
    in.fail("CUVIL-E-IMPORT-SHAPE", "recurrent layer over an empty sequence");
  if (steps * layers * dirs > kMaxUnrolledSteps)
    return in.unsupported(std::string("aten::") + cellName(cell) + " with " +
                          std::to_string(steps * layers * dirs) +
                          " unrolled steps (the limit is " + std::to_string(kMaxUnrolledSteps) + ")");
  for (Value h : hx) {
    RankedTensorType t = typeOf(h);
    if (t.getRank() != 3 || (!t.isDynamicDim(0) && t.getDimSize(0) != layers * dirs))
      in.fail("CUVIL-E-IMPORT-SHAPE", "the initial hidden state must be [num_layers * directions, "
                                      "batch, hidden] = [" +
                                          std::to_string(layers * dirs) + ", batch, hidden]");
  }

  Builder B{in, in.builder()};
  // w_hh is [gates * H, H] (a packed one's weight holds it as int8).
  auto weightHh = [&](int64_t idx) -> Value {
    if (!quantized)
      return params[idx * perCell + 1];
    const IValue &w = cells[idx]->object->attrs.at("packed_hh").object->attrs.at("weight");
    return w.tensor->quantized() ? w.tensor->qstorage : w.tensor->value;
  };
  int64_t hidden = typeOf(weightHh(0)).getDimSize(1);
  int64_t gates = gateCount(cell);
  // The projection x W^T + b of one cell's input or hidden state.
  bool poisoned = false;
  auto project = [&](Value x, const CellWeights &w, bool ih) -> Value {
    if (!quantized)
      return ih ? B.linear(x, w.wIh, w.bIh) : B.linear(x, w.wHh, w.bHh);
    IValue y = dynamicQuantizedLinear(in, x, ih ? *w.packedIh : *w.packedHh, w.reduceRange, false, opName);
    if (!y.isTensor()) {
      poisoned = true;
      return x;
    }
    return y.tensor->value;
  };
  Value layerInput = batchFirst ? B.transpose01(input) : input; // [T, B, I]
  std::vector<Value> finalH, finalC;
  for (int64_t layer = 0; layer < layers; ++layer) {
    std::vector<Value> dirOutputs;
    for (int64_t dir = 0; dir < dirs; ++dir) {
      int64_t idx = layer * dirs + dir;
      CellWeights w;
      if (quantized) {
        const ObjectInst &c = *cells[idx]->object;
        w.packedIh = &c.attrs.at("packed_ih");
        w.packedHh = &c.attrs.at("packed_hh");
        w.reduceRange = c.attrs.at("reduce_range").b;
      } else {
        w = {params[idx * perCell], params[idx * perCell + 1], hasBiases ? params[idx * perCell + 2] : Value(),
             hasBiases ? params[idx * perCell + 3] : Value()};
      }
      RankedTensorType whh = typeOf(weightHh(idx));
      if (whh.getRank() != 2 || whh.getDimSize(0) != gates * hidden || whh.getDimSize(1) != hidden)
        in.fail("CUVIL-E-IMPORT-SHAPE", std::string("aten::") + cellName(cell) +
                                            ": weight_hh must be [" + std::to_string(gates) +
                                            " * hidden, hidden]");
      Value h = B.select(hx[0], 0, idx), c = cell == Cell::LSTM ? B.select(hx[1], 0, idx) : Value();
      Value xProj = project(layerInput, w, true); // [T, B, gates * H]
      if (poisoned)
        return IValue::poison();
      std::vector<Value> outputs(steps);
      for (int64_t s = 0; s < steps; ++s) {
        int64_t t = dir == 0 ? s : steps - 1 - s;
        Value xt = B.select(xProj, 0, t);
        Value ht = project(h, w, false);
        if (poisoned)
          return IValue::poison();
        cellStep(B, cell, hidden, xt, ht, h, c);
        outputs[t] = B.unsqueeze(h, 0);
      }
      dirOutputs.push_back(B.concat(outputs, 0)); // [T, B, H]
      finalH.push_back(h);
      if (c)
        finalC.push_back(c);
    }
    layerInput = B.concat(dirOutputs, 2); // [T, B, dirs * H]; eval mode: no dropout
  }
  Value output = batchFirst ? B.transpose01(layerInput) : layerInput;
  IValueList results = {IValue::ofTensor(output), IValue::ofTensor(B.stack(finalH))};
  if (cell == Cell::LSTM)
    results.push_back(IValue::ofTensor(B.stack(finalC)));
  return IValue::makeTuple(std::move(results));
}

/// quantized::quantized_{lstm,gru,rnn_tanh,rnn_relu}_cell_dynamic: one step
/// of a dynamically quantized cell module (nn.LSTMCell etc. after
/// quantize_dynamic); both projections quantize their input by its own
/// range with reduce_range (the default of ATen's QuantizedCellParamsDynamic;
/// only onednn honours it).
/// A cell's state argument: [h, c] for an LSTM, h for the others.
void readHiddenState(Interpreter &in, const IValue &hx, Cell cell, const std::string &opName, Value &h, Value &c) {
  if (cell == Cell::LSTM) {
    if (!hx.isSequence() || hx.list->size() != 2 || !(*hx.list)[0].isTensor() || !(*hx.list)[1].isTensor())
      in.fail("CUVIL-E-IMPORT-RAISE", opName + " expects hx = [h, c]");
    h = (*hx.list)[0].tensor->value;
    c = (*hx.list)[1].tensor->value;
    return;
  }
  if (!hx.isTensor())
    in.fail("CUVIL-E-IMPORT-TYPE", opName + ": hx must be a tensor");
  h = hx.tensor->value;
}

/// One step from the two projections, checked, and its result.
IValue stepCell(Interpreter &in, Cell cell, const std::string &opName, Value xt, Value ht, Value h, Value c) {
  RankedTensorType ty = typeOf(ht), tx = typeOf(xt);
  auto compatible = [](int64_t a, int64_t b) { return a == b || mlir::ShapedType::isDynamic(a) || mlir::ShapedType::isDynamic(b); };
  if (ty.getRank() != 2 || tx.getRank() != 2 || ty.getDimSize(1) != tx.getDimSize(1) ||
      !compatible(ty.getDimSize(0), tx.getDimSize(0)) || ty.getDimSize(1) % gateCount(cell))
    in.fail("CUVIL-E-IMPORT-SHAPE", opName + ": the projections of the input and of the hidden state must both "
                                             "be [batch, " + std::to_string(gateCount(cell)) + " * hidden]");
  Builder B{in, in.builder()};
  cellStep(B, cell, ty.getDimSize(1) / gateCount(cell), xt, ht, h, c);
  if (cell == Cell::LSTM)
    return IValue::makeTuple({IValue::ofTensor(h), IValue::ofTensor(c)});
  return IValue::ofTensor(h);
}

IValue lowerDynamicCell(Interpreter &in, const BoundArgs &args, Cell cell) {
  std::string opName = std::string("quantized::quantized_") + cellName(cell) + "_cell_dynamic";
  const IValue &xv = args.get("input");
  if (!xv.isTensor() || xv.tensor->quantized())
    in.fail("CUVIL-E-IMPORT-TYPE", opName + ": the input must be a float tensor");
  Value h, c;
  readHiddenState(in, args.get("hx"), cell, opName, h, c);
  IValue xt = dynamicQuantizedLinear(in, xv.tensor->value, args.get("w_ih"), true, false, opName);
  IValue ht = dynamicQuantizedLinear(in, h, args.get("w_hh"), true, false, opName);
  if (!xt.isTensor() || !ht.isTensor())
    return IValue::poison();
  return stepCell(in, cell, opName, xt.tensor->value, ht.tensor->value, h, c);
}

/// torch.nn.LSTMCell / GRUCell / RNNCell: one step, the projections as
/// linear layers (their biases may be absent).
IValue lowerCell(Interpreter &in, const BoundArgs &args, Cell cell) {
  std::string opName = std::string("aten::") + cellName(cell) + "_cell";
  const IValue &xv = args.get("input");
  if (!xv.isTensor())
    in.fail("CUVIL-E-IMPORT-TYPE", opName + ": the input must be a tensor");
  Value h, c;
  readHiddenState(in, args.get("hx"), cell, opName, h, c);
  auto project = [&](Value v, const char *weight, const char *bias) {
    const IValue &w = args.get(weight), &b = args.get(bias);
    if (!w.isTensor())
      in.fail("CUVIL-E-IMPORT-TYPE", opName + ": " + weight + " must be a tensor");
    return in.build<cir::LinearOp>(v, w.tensor->value, b.isTensor() ? b.tensor->value : Value());
  };
  Value xt = project(xv.tensor->value, "w_ih", "b_ih"), ht = project(h, "w_hh", "b_hh");
  return stepCell(in, cell, opName, xt, ht, h, c);
}

} // namespace

void registerRecurrentHandlers(std::map<std::string, OpHandler> &table) {
  table["aten::lstm"] = [](Interpreter &in, const BoundArgs &b) { return lowerRecurrent(in, b, Cell::LSTM, false); };
  table["aten::gru"] = [](Interpreter &in, const BoundArgs &b) { return lowerRecurrent(in, b, Cell::GRU, false); };
  table["aten::rnn_tanh"] = [](Interpreter &in, const BoundArgs &b) { return lowerRecurrent(in, b, Cell::RNNTanh, false); };
  table["aten::rnn_relu"] = [](Interpreter &in, const BoundArgs &b) { return lowerRecurrent(in, b, Cell::RNNRelu, false); };
  table["aten::quantized_lstm"] = [](Interpreter &in, const BoundArgs &b) { return lowerRecurrent(in, b, Cell::LSTM, true); };
  table["aten::quantized_gru"] = [](Interpreter &in, const BoundArgs &b) { return lowerRecurrent(in, b, Cell::GRU, true); };
  for (Cell c : {Cell::LSTM, Cell::GRU, Cell::RNNTanh, Cell::RNNRelu})
    table[std::string("aten::") + cellName(c) + "_cell"] = [c](Interpreter &in, const BoundArgs &b) {
      return lowerCell(in, b, c);
    };
  for (Cell c : {Cell::LSTM, Cell::GRU, Cell::RNNTanh, Cell::RNNRelu})
    table[std::string("quantized::quantized_") + cellName(c) + "_cell_dynamic"] = [c](Interpreter &in, const BoundArgs &b) {
      return lowerDynamicCell(in, b, c);
    };
}

} // namespace cuvil::torchscript
