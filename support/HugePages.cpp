//===- HugePages.cpp - Zeroed memory on huge pages --------------------------===//
#include "support/HugePages.h"

#include <sys/mman.h>

namespace cuvil {

char *mapHugePages(size_t size) {
  if (size == 0)
    return nullptr;
  void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
#ifdef MADV_HUGEPAGE
  ::madvise(p, size, MADV_HUGEPAGE); // advice: without it, 4 KiB pages
#endif
  return static_cast<char *>(p);
}

void unmapHugePages(char *p, size_t size) {
  if (p)
    ::munmap(p, size);
}

} // namespace cuvil
