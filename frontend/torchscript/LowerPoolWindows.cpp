//===- LowerPoolWindows.cpp - Pooling by gathered windows -----------------===//
//
// The pooling forms the dedicated pool ops do not cover: max pooling that
// also returns indices, adaptive max pooling, 3-D max/avg/adaptive-avg
// pooling, and max_unpool. Each window's positions in the flattened spatial
// plane are tabulated at import time (positions outside the input point at
// one padding element appended to the plane: -inf for max, 0 for sums), the
// windows are gathered with one index_select, and reduced over the window
// axis; max pooling's indices are the table entries at the argmax, i.e.
// PyTorch's flat positions within each plane.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/LowerHelpers.h"

#include <array>
#include <cmath>
#include <limits>
#include <numeric>

namespace cuvil::torchscript {
namespace {

using namespace lower;

/// Per axis: for each output position, the input positions of its window
/// (-1 where the window is shorter or leaves the input).
struct Axis {
  int64_t in = 0, out = 0, width = 0;
  std::vector<std::vector<int64_t>> windows;
  std::vector<int64_t> padded; ///< per output: the window's size counting padding (avg pool)
};

/// PyTorch's pooling output size.
int64_t pooledSize(int64_t L, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  int64_t span = L + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (out - 1) * s >= L + p)
    --out;
  return out;
}

Axis slidingAxis(Interpreter &in, int64_t L, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  Axis a;
  a.in = L;
  a.out = pooledSize(L, k, s, p, d, ceil);
  if (a.out <= 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "pooling: the output size is too small (" + std::to_string(a.out) + ")");
  a.width = k;
  for (int64_t o = 0; o < a.out; ++o) {
    std::vector<int64_t> w;
    for (int64_t j = 0; j < k; ++j) {
      int64_t pos = o * s - p + j * d;
      w.push_back(pos >= 0 && pos < L ? pos : -1);
    }
    a.windows.push_back(w);
    int64_t start = o * s - p, end = std::min(start + k, L + p);
    a.padded.push_back(end - start);
  }
  return a;
}

Axis adaptiveAxis(int64_t L, int64_t out) {
  Axis a;
  a.in = L;
  a.out = out;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = (o * L) / out, end = ((o + 1) * L + out - 1) / out;
    a.width = std::max(a.width, end - start);
  }
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = (o * L) / out, end = ((o + 1) * L + out - 1) / out;
    std::vector<int64_t> w;
    for (int64_t j = 0; j < a.width; ++j)
      w.push_back(start + j < end ? start + j : -1);
    a.windows.push_back(w);
    a.padded.push_back(end - start);
  }
  return a;
}

struct WindowTable {
  std::vector<int64_t> outShape, positions; ///< [O][W]: flat plane positions, `pad` outside
  std::vector<double> valid, padded;        ///< per output: valid count, count with padding
  int64_t windows = 0, width = 0, plane = 0;
};

WindowTable tabulate(const std::vector<Axis> &axes) {
  WindowTable t;
  t.plane = 1;
  t.width = 1;
  for (const Axis &a : axes) {
    t.outShape.push_back(a.out);
    t.plane *= a.in;
    t.width *= a.width;
  }
  t.windows = numel(t.outShape);
  size_t S = axes.size();
  std::vector<int64_t> o(S, 0);
  for (int64_t n = 0; n < t.windows; ++n) {
    std::vector<int64_t> j(S, 0);
    double valid = 0, padded = 1;
    for (size_t d = 0; d < S; ++d)
      padded *= double(axes[d].padded[o[d]]);
    for (int64_t w = 0; w < t.width; ++w) {
      int64_t pos = 0;
      bool inside = true;
      for (size_t d = 0; d < S; ++d) {
        int64_t p = axes[d].windows[o[d]][j[d]];
        inside &= p >= 0;
        pos = pos * axes[d].in + std::max<int64_t>(p, 0);
      }
      t.positions.push_back(inside ? pos : t.plane);
      valid += inside;
      for (int64_t d = int64_t(S) - 1; d >= 0; --d) {
        if (++j[d] < axes[d].width)
          break;
        j[d] = 0;
      }
    }
    t.valid.push_back(valid);
    t.padded.push_back(padded);
    for (int64_t d = int64_t(S) - 1; d >= 0; --d) {
      if (++o[d] < axes[d].out)
        break;
      o[d] = 0;
    }
  }
  return t;
}

/// x [B, C, *spatial] gathered into windows: [B, C, O, W], positions
/// outside the input reading `fill`.
Value gatherWindows(Interpreter &in, Value x, const WindowTable &t, double fill) {
  std::vector<int64_t> s = shapeOf(x);
  int64_t b = s[0], c = s[1];
  Value flat = reshape(in, x, {b, c, t.plane});
  Value pad = splat(in, {b, c, 1}, dtypeOf(x), IValue::floating(fill));
  if (!isFloat(dtypeOf(x)))
    pad = splat(in, {b, c, 1}, dtypeOf(x), IValue::integer(fill < 0 ? std::numeric_limits<int64_t>::min() : 0));
  Value ext = in.build<cir::ConcatOp>(mlir::ValueRange{flat, pad}, i64(in, 2));
  Value g = in.build<cir::IndexSelectOp>(ext, constantI64(in, t.positions), i64(in, 2));
  return reshape(in, g, {b, c, t.windows, t.width});
}

/// Runs `fn` on x with a batch dimension (PyTorch's unbatched [C, ...]
/// inputs gain one and lose it again).
template <typename Fn> IValue batched(Interpreter &in, Value x, int64_t spatial, Fn fn) {
  if (rankOf(x) != spatial + 1 && rankOf(x) != spatial + 2)
    in.fail("CUVIL-E-IMPORT-RAISE", "pooling over " + std::to_string(spatial) + " dimension(s) expects a rank-" +
                                        std::to_string(spatial + 1) + " or rank-" + std::to_string(spatial + 2) +
                                        " input");
  bool unbatched = rankOf(x) == spatial + 1;
  if (unbatched) {
    std::vector<int64_t> s = shapeOf(x);
    s.insert(s.begin(), 1);
    x = reshape(in, x, s);
  }
  std::vector<Value> outs = fn(x);
  IValueList items;
  for (Value v : outs) {
    if (unbatched) {
      std::vector<int64_t> s = shapeOf(v);
      s.erase(s.begin());
      v = reshape(in, v, s);
    }
    items.push_back(ret(v));
  }
  return items.size() == 1 ? items[0] : IValue::makeTuple(items);
}

/// Max over the windows, with PyTorch's indices.
std::vector<Value> maxOverWindows(Interpreter &in, Value x, const WindowTable &t, bool withIndices) {
  std::vector<int64_t> s = shapeOf(x);
  int64_t b = s[0], c = s[1];
  Value w = gatherWindows(in, x, t, -std::numeric_limits<double>::infinity());
  std::vector<int64_t> outShape{b, c};
  outShape.insert(outShape.end(), t.outShape.begin(), t.outShape.end());
  Value m = reshape(in, in.build<cir::MaxOp>(w, i64s(in, {3}), mlir::UnitAttr()), outShape);
  if (!withIndices)
    return {m};
  Value k = in.build<cir::ArgmaxOp>(w, i64(in, 3), in.builder().getUnitAttr()); // [b, c, O, 1]
  Value table = expandTo(in, constantI64(in, t.positions, {1, 1, t.windows, t.width}), {b, c, t.windows, t.width});
  Value idx = reshape(in, in.build<cir::GatherOp>(table, k, i64(in, 3)), outShape);
  return {m, idx};
}

void registerPoolWindowHandlers(Table &t) {
  for (int64_t spatial : {1, 2, 3}) {
    auto maxPool = [spatial](bool withIndices) {
      return [spatial, withIndices](Interpreter &in, const BoundArgs &b) {
        Args a{in, b};
        std::vector<int64_t> k = fitSpatial(in, a.ints("kernel_size"), spatial, "kernel_size");
        std::vector<int64_t> s = fitSpatial(in, a.ints("stride"), spatial, "stride", k);
        std::vector<int64_t> p = fitSpatial(in, a.ints("padding"), spatial, "padding");
        std::vector<int64_t> d = fitSpatial(in, a.ints("dilation"), spatial, "dilation");
        bool ceil = a.b("ceil_mode");
        return batched(in, a.t("self"), spatial, [&](Value x) {
          std::vector<Axis> axes;
          for (int64_t i = 0; i < spatial; ++i) {
            if (p[i] * 2 > k[i])
              in.fail("CUVIL-E-IMPORT-RAISE", "pad should be at most half of effective kernel size");
            axes.push_back(slidingAxis(in, shapeOf(x)[2 + i], k[i], s[i], p[i], d[i], ceil));
          }
          return maxOverWindows(in, x, tabulate(axes), withIndices);
        });
      };
    };
    std::string n = std::to_string(spatial);
    t["aten::max_pool" + n + "d_with_indices"] = maxPool(true);
    if (spatial == 3)
      t["aten::max_pool3d"] = maxPool(false);
    t["aten::adaptive_max_pool" + n + "d"] = [spatial](Interpreter &in, const BoundArgs &b) {
      Args a{in, b};
      std::vector<int64_t> out = fitSpatial(in, a.ints("output_size"), spatial, "output_size");
      return batched(in, a.t("self"), spatial, [&](Value x) {
        std::vector<Axis> axes;
        for (int64_t i = 0; i < spatial; ++i)
          axes.push_back(adaptiveAxis(shapeOf(x)[2 + i], out[i]));
        return maxOverWindows(in, x, tabulate(axes), true);
      });
    };
  }
  // 3-D average pools (1-D and 2-D have their own ops).
  auto averageOver = [](Interpreter &in, Value x, const WindowTable &t, const std::vector<double> &divisor) {
    DType d = dtypeOf(x);
    Value xf = isFloat(d) ? x : cast(in, x, DType::Float64);
    std::vector<int64_t> s = shapeOf(x);
    Value w = gatherWindows(in, xf, t, 0.0);
    Value sum = in.build<cir::SumOp>(w, i64s(in, {3}), mlir::UnitAttr()); // [b, c, O]
    Value div = constantFrom(in, Tensor::fromDoubles(dtypeOf(xf), {t.windows}, divisor));
    Value avg = in.build<cir::DivOp>(sum, div, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None));
    std::vector<int64_t> outShape{s[0], s[1]};
    outShape.insert(outShape.end(), t.outShape.begin(), t.outShape.end());
    avg = reshape(in, avg, outShape);
    return std::vector<Value>{isFloat(d) ? avg : cast(in, avg, d)};
  };
  t["aten::avg_pool3d"] = [averageOver](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<int64_t> k = fitSpatial(in, a.ints("kernel_size"), 3, "kernel_size");
    std::vector<int64_t> s = fitSpatial(in, a.ints("stride"), 3, "stride", k);
    std::vector<int64_t> p = fitSpatial(in, a.ints("padding"), 3, "padding");
    bool ceil = a.b("ceil_mode"), includePad = a.b("count_include_pad");
    std::optional<int64_t> divisor;
    if (!a.none("divisor_override"))
      divisor = a.i("divisor_override");
    return batched(in, a.t("self"), 3, [&](Value x) {
      std::vector<Axis> axes;
      for (int64_t i = 0; i < 3; ++i)
        axes.push_back(slidingAxis(in, shapeOf(x)[2 + i], k[i], s[i], p[i], 1, ceil));
      WindowTable tab = tabulate(axes);
      std::vector<double> div(tab.windows);
      for (int64_t o = 0; o < tab.windows; ++o)
        div[o] = divisor ? double(*divisor) : includePad ? tab.padded[o] : tab.valid[o];
      return averageOver(in, x, tab, div);
    });
  };
  t["aten::adaptive_avg_pool3d"] = [averageOver](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<int64_t> out = fitSpatial(in, a.ints("output_size"), 3, "output_size");
    return batched(in, a.t("self"), 3, [&](Value x) {
      std::vector<Axis> axes;
      for (int64_t i = 0; i < 3; ++i)
        axes.push_back(adaptiveAxis(shapeOf(x)[2 + i], out[i]));
      WindowTable tab = tabulate(axes);
      return averageOver(in, x, tab, tab.valid);
    });
  };
  // im2col (F.unfold) and col2im (F.fold): the windows as columns
  // [N, C*kh*kw, L], and their sum back into the planes.
  auto windows2d = [](Interpreter &in, const Args &a, int64_t h, int64_t w) {
    std::vector<int64_t> k = fitSpatial(in, a.ints("kernel_size"), 2, "kernel_size");
    std::vector<int64_t> d = fitSpatial(in, a.ints("dilation"), 2, "dilation");
    std::vector<int64_t> p = fitSpatial(in, a.ints("padding"), 2, "padding");
    std::vector<int64_t> s = fitSpatial(in, a.ints("stride"), 2, "stride");
    return tabulate({slidingAxis(in, h, k[0], s[0], p[0], d[0], false), slidingAxis(in, w, k[1], s[1], p[1], d[1], false)});
  };
  t["aten::im2col"] = [windows2d](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return batched(in, a.t("self"), 2, [&](Value x) {
      std::vector<int64_t> xs = shapeOf(x);
      WindowTable tab = windows2d(in, a, xs[2], xs[3]);
      Value g = gatherWindows(in, x, tab, 0.0); // [n, c, L, k]
      g = in.build<cir::PermuteOp>(g, i64s(in, {0, 1, 3, 2}));
      return std::vector<Value>{reshape(in, g, {xs[0], xs[1] * tab.width, tab.windows})};
    });
  };
  t["aten::col2im"] = [windows2d](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    std::vector<int64_t> out = fitSpatial(in, a.ints("output_size"), 2, "output_size");
    Value x = a.t("self");
    bool unbatched = rankOf(x) == 2;
    if (unbatched)
      x = reshape(in, x, {1, shapeOf(x)[0], shapeOf(x)[1]});
    WindowTable tab = windows2d(in, a, out[0], out[1]);
    std::vector<int64_t> xs = shapeOf(x);
    int64_t n = xs[0], c = xs[1] / tab.width;
    if (xs[1] % tab.width || xs[2] != tab.windows)
      in.fail("CUVIL-E-IMPORT-RAISE", "col2im: the input's shape does not match the kernel and output size");
    Value cols = in.build<cir::PermuteOp>(reshape(in, x, {n, c, tab.width, tab.windows}), i64s(in, {0, 1, 3, 2}));
    cols = reshape(in, cols, {n, c, tab.windows * tab.width});
    Value idx = expandTo(in, constantI64(in, tab.positions, {1, 1, tab.windows * tab.width}), {n, c, tab.windows * tab.width});
    Value zeros = splat(in, {n, c, tab.plane + 1}, dtypeOf(x), IValue::integer(0));
    Value sum = in.build<cir::ScatterOp>(zeros, idx, cols, i64(in, 2),
                                         cir::ScatterReduceAttr::get(in.context(), cir::ScatterReduce::Sum),
                                         in.builder().getBoolAttr(true));
    sum = in.build<cir::SliceOp>(sum, i64(in, 2), i64(in, 0), i64(in, tab.plane), i64(in, 1));
    Value r = reshape(in, sum, {n, c, out[0], out[1]});
    return ret(unbatched ? reshape(in, r, {c, out[0], out[1]}) : r);
  };
  // grid_sample (4-D): each output reads the input at a grid point, by
  // its nearest pixel, the bilinear blend of the four around it or the
  // bicubic one of sixteen; reads outside the input give 0 (padding
  // 'zeros'), are clamped ('border') or mirrored ('reflection').
  auto gridSample = [](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    Value x = a.t("input"), grid = cast(in, a.t("grid"), dtypeOf(a.t("input")));
    int64_t mode = a.i("interpolation_mode"), padding = a.i("padding_mode");
    bool align = a.b("align_corners");
    if (rankOf(x) != 4 || rankOf(grid) != 4 || shapeOf(grid)[3] != 2)
      return in.unsupported("grid_sample other than 4-D input with an [N, H, W, 2] grid");
    if (mode < 0 || mode > 2 || padding < 0 || padding > 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "grid_sampler(): unknown interpolation or padding mode");
    if (!isFloat(dtypeOf(x)))
      in.fail("CUVIL-E-IMPORT-RAISE", "grid_sampler(): expected a floating point input");
    std::vector<int64_t> xs = shapeOf(x), gs = shapeOf(grid);
    int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], l = gs[1] * gs[2];
    auto num = [&](double v) { return in.scalarConstant(IValue::floating(v), dtypeOf(x)); };
    auto divide = [&](Value p, Value q) {
      return Value(in.build<cir::DivOp>(p, q, cir::RoundingModeAttr::get(in.context(), cir::RoundingMode::None)));
    };
    auto unnormalize = [&](int64_t k, int64_t size) { // [n, l]
      Value g = reshape(in, in.build<cir::SliceOp>(grid, i64(in, 3), i64(in, k), i64(in, k + 1), i64(in, 1)), {n, l});
      Value one = num(1.0);
      return align ? Value(in.build<cir::MulOp>(divide(in.build<cir::AddOp>(g, one), num(2.0)), num(double(size - 1))))
                   : divide(in.build<cir::SubOp>(in.build<cir::MulOp>(in.build<cir::AddOp>(g, one), num(double(size))), one),
                            num(2.0));
    };
    auto clip = [&](Value u, int64_t size) {
      return Value(in.build<cir::MinimumOp>(in.build<cir::MaximumOp>(u, num(0.0)), num(double(size - 1))));
    };
    // PyTorch's reflect_coordinates over [lo2/2, hi2/2], then clipped.
    auto reflect = [&](Value u, int64_t size) {
      double lo2 = align ? 0.0 : -1.0, hi2 = align ? 2.0 * double(size - 1) : 2.0 * double(size) - 1.0;
      if (lo2 == hi2)
        return Value(in.build<cir::MulOp>(u, num(0.0)));
      double lo = lo2 / 2, span = (hi2 - lo2) / 2;
      Value d = in.build<cir::AbsOp>(in.build<cir::SubOp>(u, num(lo)));
      Value flips = in.build<cir::FloorOp>(divide(d, num(span)));
      Value extra = in.build<cir::SubOp>(d, in.build<cir::MulOp>(flips, num(span)));
      Value half = in.build<cir::FloorOp>(divide(flips, num(2.0)));
      Value even = in.build<cir::EqOp>(in.build<cir::SubOp>(flips, in.build<cir::MulOp>(half, num(2.0))), num(0.0));
      Value r = in.build<cir::WhereOp>(even, in.build<cir::AddOp>(extra, num(lo)),
                                       in.build<cir::AddOp>(in.build<cir::SubOp>(num(span), extra), num(lo)));
      return clip(r, size);
    };
    auto pad = [&](Value u, int64_t size) {
      return padding == 1 ? clip(u, size) : padding == 2 ? reflect(u, size) : u;
    };
    Value ux = unnormalize(0, w), uy = unnormalize(1, h);
    Value ix = pad(ux, w), iy = pad(uy, h);
    Value flat = reshape(in, x, {n, c, h * w});
    Value ext = in.build<cir::ConcatOp>(mlir::ValueRange{flat, splat(in, {n, c, 1}, dtypeOf(x), IValue::floating(0.0))},
                                        i64(in, 2));
    // The input at integer (px, py) ([n, l], float), 0 outside.
    auto at = [&](Value px, Value py) {
      Value inside = in.build<cir::LogicalAndOp>(
          in.build<cir::LogicalAndOp>(in.build<cir::GeOp>(px, num(0.0)), in.build<cir::LeOp>(px, num(double(w - 1)))),
          in.build<cir::LogicalAndOp>(in.build<cir::GeOp>(py, num(0.0)), in.build<cir::LeOp>(py, num(double(h - 1)))));
      Value pos = cast(in, in.build<cir::AddOp>(in.build<cir::MulOp>(py, num(double(w))), px), DType::Int64);
      pos = in.build<cir::WhereOp>(inside, pos, in.scalarConstant(IValue::integer(h * w), DType::Int64));
      Value idx = expandTo(in, reshape(in, pos, {n, 1, l}), {n, c, l});
      return Value(in.build<cir::GatherOp>(ext, idx, i64(in, 2)));
    };
    Value out;
    if (mode == 1) {
      out = at(in.build<cir::RoundOp>(ix), in.build<cir::RoundOp>(iy));
    } else if (mode == 2) {
      // Bicubic: 4 x 4 taps around the unpadded point, each tap's position
      // padded on its own, weights of PyTorch's cubic convolution (A = -0.75).
      Value x0 = in.build<cir::FloorOp>(ux), y0 = in.build<cir::FloorOp>(uy);
      Value tx = in.build<cir::SubOp>(ux, x0), ty = in.build<cir::SubOp>(uy, y0);
      const double A = -0.75;
      auto cc1 = [&](Value t) { // ((A + 2) t - (A + 3)) t t + 1
        Value p = in.build<cir::SubOp>(in.build<cir::MulOp>(t, num(A + 2)), num(A + 3));
        return Value(in.build<cir::AddOp>(in.build<cir::MulOp>(in.build<cir::MulOp>(p, t), t), num(1.0)));
      };
      auto cc2 = [&](Value t) { // ((A t - 5A) t + 8A) t - 4A
        Value p = in.build<cir::SubOp>(in.build<cir::MulOp>(t, num(A)), num(5 * A));
        p = in.build<cir::AddOp>(in.build<cir::MulOp>(p, t), num(8 * A));
        return Value(in.build<cir::SubOp>(in.build<cir::MulOp>(p, t), num(4 * A)));
      };
      auto coeffs = [&](Value t) {
        Value one = num(1.0), two = num(2.0);
        return std::array<Value, 4>{cc2(in.build<cir::AddOp>(t, one)), cc1(t), cc1(in.build<cir::SubOp>(one, t)),
                                    cc2(in.build<cir::SubOp>(two, t))};
      };
      std::array<Value, 4> wx = coeffs(tx), wy = coeffs(ty);
      for (int j = 0; j < 4; ++j) {
        Value py = pad(in.build<cir::AddOp>(y0, num(double(j - 1))), h);
        for (int i = 0; i < 4; ++i) {
          Value px = pad(in.build<cir::AddOp>(x0, num(double(i - 1))), w);
          Value term = in.build<cir::MulOp>(at(px, py), reshape(in, in.build<cir::MulOp>(wx[i], wy[j]), {n, 1, l}));
          out = out ? Value(in.build<cir::AddOp>(out, term)) : term;
        }
      }
    } else {
      Value x0 = in.build<cir::FloorOp>(ix), y0 = in.build<cir::FloorOp>(iy);
      Value x1 = in.build<cir::AddOp>(x0, num(1.0)), y1 = in.build<cir::AddOp>(y0, num(1.0));
      auto weight = [&](Value wx, Value wy) { return reshape(in, in.build<cir::MulOp>(wx, wy), {n, 1, l}); };
      Value ex = in.build<cir::SubOp>(x1, ix), wxr = in.build<cir::SubOp>(ix, x0);
      Value ey = in.build<cir::SubOp>(y1, iy), wyr = in.build<cir::SubOp>(iy, y0);
      out = in.build<cir::MulOp>(at(x0, y0), weight(ex, ey));
      out = in.build<cir::AddOp>(out, in.build<cir::MulOp>(at(x1, y0), weight(wxr, ey)));
      out = in.build<cir::AddOp>(out, in.build<cir::MulOp>(at(x0, y1), weight(ex, wyr)));
      out = in.build<cir::AddOp>(out, in.build<cir::MulOp>(at(x1, y1), weight(wxr, wyr)));
    }
    return ret(reshape(in, out, {n, c, gs[1], gs[2]}));
  };
  t["aten::grid_sampler"] = gridSample;
  t["aten::grid_sampler_2d"] = gridSample;
  // max_unpool: the values scattered to their flat positions in each plane.
  auto unpool = [](Interpreter &in, Value x, Value indices, std::vector<int64_t> size, int64_t spatial) {
    return batched(in, x, spatial, [&](Value bx) {
      std::vector<int64_t> s = shapeOf(bx);
      int64_t b = s[0], c = s[1], plane = numel(size), n = numel(shapeOf(bx)) / (b * c);
      Value idx = cast(in, indices, DType::Int64);
      idx = reshape(in, idx, {b, c, n});
      Value zeros = splat(in, {b, c, plane}, dtypeOf(bx), IValue::integer(0));
      Value out = in.build<cir::ScatterOp>(zeros, idx, reshape(in, bx, {b, c, n}), i64(in, 2),
                                           cir::ScatterReduceAttr::get(in.context(), cir::ScatterReduce::None),
                                           in.builder().getBoolAttr(true));
      std::vector<int64_t> os{b, c};
      os.insert(os.end(), size.begin(), size.end());
      return std::vector<Value>{reshape(in, out, os)};
    });
  };
  t["aten::max_unpool2d"] = [unpool](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return unpool(in, a.t("self"), a.t("indices"), fitSpatial(in, a.ints("output_size"), 2, "output_size"), 2);
  };
  t["aten::max_unpool3d"] = [unpool](Interpreter &in, const BoundArgs &b) {
    Args a{in, b};
    return unpool(in, a.t("self"), a.t("indices"), fitSpatial(in, a.ints("output_size"), 3, "output_size"), 3);
  };
}

} // namespace

void registerPoolWindowOpHandlers(std::map<std::string, OpHandler> &table) { registerPoolWindowHandlers(table); }

} // namespace cuvil::torchscript
