//===- ArenaPlacement.h - Buffers with lifetimes in one arena ---*- C++ -*-===//
//
// Greedy by size: the largest buffer first, each at the lowest offset that
// is free among the buffers already placed whose lifetimes overlap its own.
// Shared by the graph-level memory plan (cuvil-plan-memory) and the code
// generator's arena (cuvil-allocs-to-arena).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_ARENAPLACEMENT_H
#define CUVIL_SUPPORT_ARENAPLACEMENT_H

#include <cstdint>
#include <vector>

namespace cuvil {

struct LiveBuffer {
  int64_t bytes = 0;
  int64_t start = 0, end = 0; ///< positions of first and last use, inclusive
};

struct ArenaPlacement {
  std::vector<int64_t> offsets; ///< one per buffer, in the input order
  int64_t arenaBytes = 0;
};

/// Offsets for `buffers` (sizes already rounded to the alignment wanted).
/// Ties in size go to the buffer that starts first, then to the earlier in
/// `buffers`, so the result is deterministic.
ArenaPlacement placeGreedyBySize(const std::vector<LiveBuffer> &buffers);

} // namespace cuvil

#endif // CUVIL_SUPPORT_ARENAPLACEMENT_H
