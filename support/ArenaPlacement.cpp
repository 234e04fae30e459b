//===- ArenaPlacement.cpp - Buffers with lifetimes in one arena -----------===//
#include "support/ArenaPlacement.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace cuvil {

ArenaPlacement placeGreedyBySize(const std::vector<LiveBuffer> &buffers) {
  ArenaPlacement result;
  result.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes)
      return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].start != buffers[b].start ? buffers[a].start < buffers[b].start : a < b;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const LiveBuffer &b = buffers[i];
    std::vector<std::pair<int64_t, int64_t>> busy; // [offset, end) of live neighbours
    for (size_t j : placed) {
      const LiveBuffer &o = buffers[j];
      if (b.start <= o.end && o.start <= b.end)
        busy.emplace_back(result.offsets[j], result.offsets[j] + o.bytes);
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (offset + b.bytes <= lo)
        break;
      offset = std::max(offset, hi);
    }
    result.offsets[i] = offset;
    result.arenaBytes = std::max(result.arenaBytes, offset + b.bytes);
    placed.push_back(i);
  }
  return result;
}

} // namespace cuvil
