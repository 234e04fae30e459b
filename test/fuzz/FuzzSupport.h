//===- FuzzSupport.h - What the fuzz targets share --------------*- C++ -*-===//
//
// A fuzz input as a file (MemFile), and the replayer: a fuzz target built
// without CUVIL_ENABLE_FUZZING replays each argument, a file or a directory
// of files, each file one input. ctest runs the committed regression inputs
// this way, so every crash found stays fixed.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TEST_FUZZ_FUZZSUPPORT_H
#define CUVIL_TEST_FUZZ_FUZZSUPPORT_H

#include <cstdint>
#include <cstdio>
#include <dirent.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cuvil::fuzz {

/// The payload as a file, for the readers that open paths.
struct MemFile {
  int fd = -1;
  std::string path;
  MemFile(const uint8_t *data, size_t size) {
    fd = ::memfd_create("cuvil-fuzz", 0);
    if (fd < 0)
      return;
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::write(fd, data + done, size - done);
      if (n <= 0)
        break;
      done += static_cast<size_t>(n);
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~MemFile() {
    if (fd >= 0)
      ::close(fd);
  }
};

using TestOneInput = int (*)(const uint8_t *, size_t);

inline int replay(const std::string &path, TestOneInput test, int &count) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "cannot read '%s'\n", path.c_str());
    return 1;
  }
  if (S_ISDIR(st.st_mode)) {
    DIR *d = ::opendir(path.c_str());
    if (!d)
      return 1;
    std::vector<std::string> names;
    while (dirent *e = ::readdir(d))
      if (e->d_name[0] != '.')
        names.push_back(path + "/" + e->d_name);
    ::closedir(d);
    int rc = 0;
    for (const std::string &n : names)
      rc |= replay(n, test, count);
    return rc;
  }
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return 1;
  std::vector<uint8_t> bytes;
  int c;
  while ((c = std::fgetc(f)) != EOF)
    bytes.push_back(static_cast<uint8_t>(c));
  std::fclose(f);
  test(bytes.data(), bytes.size());
  ++count;
  return 0;
}

inline int replayMain(int argc, char **argv, TestOneInput test) {
  int count = 0, rc = 0;
  for (int i = 1; i < argc; ++i)
    rc |= replay(argv[i], test, count);
  std::printf("replayed %d input(s) without a crash\n", count);
  return rc;
}

} // namespace cuvil::fuzz

#endif // CUVIL_TEST_FUZZ_FUZZSUPPORT_H
