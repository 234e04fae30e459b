//===- CostModel.cpp - Ranking kernel configurations without the device ---===//
#include "cuvil-autotune/CostModel.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include <algorithm>
#include <cmath>

namespace mc = mlir::cuvil;

namespace cuvil::tuning {

namespace {

int64_t roundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

} // namespace

double estimateSeconds(mlir::Operation *op, const mc::cpu::KernelChoice &c, const DeviceProfile &p,
                       int threads) {
  auto dims = [](mlir::Value v) { return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape(); };
  double fp32 = std::max(p.fp32_gflops_core(), 1.0) * 1e9 * threads;
  double int8 = (p.int8_gops_core() > 0 ? p.int8_gops_core() : 4 * p.fp32_gflops_core()) * 1e9 * threads;
  double bw = std::max(p.bandwidth_gbs(), 1.0) * 1e9;
  if (op->getNumResults() == 0 || op->getNumOperands() < 2)
    return 0;
  if (llvm::isa<mc::Conv2DOp, mc::QuantConv2DOp>(op)) {
    auto in = dims(op->getOperand(0)), w = dims(op->getOperand(1)), out = dims(op->getResult(0));
    int64_t groups = std::max<int64_t>(in[1] / std::max<int64_t>(w[1], 1), 1);
    int64_t pixels = out[0] * out[2] * out[3], cout = w[0] / groups, k = w[1] * w[2] * w[3];
    double useful = double(pixels) * double(w[0]) * double(k);
    double lanesCols = double(roundUp(out[2] * out[3], 32)) * roundUp(cout, 8) * out[0] * groups;
    double lanesRows = double(roundUp(out[2] * out[3], 8)) * roundUp(cout, 32) * out[0] * groups;
    double ideal = double(out[2] * out[3]) * cout * out[0] * groups;
    double peak = llvm::isa<mc::QuantConv2DOp>(op) ? int8 : fp32;
    double patchBytes = double(pixels) * k * (llvm::isa<mc::QuantConv2DOp>(op) ? 1 : 4);
    if (c.variant == mc::cpu::variant::Im2col || c.variant == mc::cpu::variant::U8S8)
      return 2 * useful / peak * (lanesCols / ideal) + patchBytes / bw;
    if (c.variant == mc::cpu::variant::PixelRows || c.variant == mc::cpu::variant::U8S8PixelRows)
      return 2 * useful / peak * (lanesRows / ideal) + 2 * patchBytes / bw;
    if (c.variant == mc::cpu::variant::WinogradF4 || c.variant == mc::cpu::variant::WinogradF2) {
      bool f4 = c.variant == mc::cpu::variant::WinogradF4;
      double side = f4 ? 4 : 2, pos = f4 ? 36 : 16;
      double tiles = double(out[0]) * std::ceil(out[2] / side) * std::ceil(out[3] / side);
      double products = 2 * tiles * pos * double(w[0]) * double(w[1]);
      double transforms = tiles * pos * double(w[0] + w[1]) * (f4 ? 12 : 6);
      double weights = pos * double(w[0]) * double(w[1]) * 4;
      return (products / 0.85 + transforms / 0.5) / fp32 + weights / bw;
    }
    if (c.variant == mc::cpu::variant::Direct)
      return 2 * useful / (fp32 * 0.4);
    return 2 * useful / fp32;
  }
  if (llvm::isa<mc::LinearOp, mc::QuantLinearOp>(op)) {
    auto x = dims(op->getOperand(0)), w = dims(op->getOperand(1));
    int64_t n = w[0], k = w[1], m = 1;
    for (int64_t d : x)
      m *= d;
    m /= std::max<int64_t>(k, 1);
    double useful = 2.0 * m * n * k;
    double peak = llvm::isa<mc::QuantLinearOp>(op) ? int8 : fp32;
    double lanes = c.variant == mc::cpu::variant::InputRows ? double(roundUp(m, 8)) * roundUp(n, 32)
                                                             : double(roundUp(m, 32)) * roundUp(n, 8);
    return useful / peak * lanes / double(m * n) + double(n) * k * 4 / bw;
  }
  return 0;
}

} // namespace cuvil::tuning
