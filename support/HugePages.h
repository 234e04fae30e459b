//===- HugePages.h - Zeroed memory on huge pages ---------------*- C++ -*-===//
//
// Megabytes written once (a model's weights as they are read, packed
// weights, a library's weights section) in anonymous memory advised onto
// transparent huge pages: zero already (no memset), and a page fault per
// 2 MiB rather than per 4 KiB as it is first written.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_HUGEPAGES_H
#define CUVIL_SUPPORT_HUGEPAGES_H

#include <cstddef>

namespace cuvil {

/// `size` (> 0) zero bytes, page-aligned, or null when the system gives
/// none. Freed with unmapHugePages(p, size).
char *mapHugePages(size_t size);
void unmapHugePages(char *p, size_t size);

} // namespace cuvil

#endif // CUVIL_SUPPORT_HUGEPAGES_H
