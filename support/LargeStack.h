//===- LargeStack.h - Run a tool's work on a thread with a large stack -*- C++ -*-===//
//
// MLIR's parsers and many passes recurse once per nesting level of the IR,
// its types and its attributes. IR text is refused past a nesting limit
// (IrNesting.h), but bytecode cannot be scanned that cheaply: a 20,000-deep
// type in 100 KB of bytecode overflows the main thread's 8 MB stack. The
// tools run their work on a thread whose stack is reserved large (1 GiB of
// address space, committed only as it is touched), so that any IR a real
// model can hold is far from the limit. Where that thread cannot be made (a
// tight ulimit -v), the work runs on the calling thread as before.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_LARGESTACK_H
#define CUVIL_SUPPORT_LARGESTACK_H

#include <cstddef>
#include <functional>

namespace cuvil {

/// Runs `work` on a thread with a `stackBytes` stack and returns its result
/// (a tool's exit status).
int runOnLargeStack(const std::function<int()> &work, size_t stackBytes = size_t(1) << 30);

} // namespace cuvil

#endif // CUVIL_SUPPORT_LARGESTACK_H
