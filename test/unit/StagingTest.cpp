//===- StagingTest.cpp - Staged outputs, library and input checks ---------===//
//
// The pieces behind RELIABILITY.md's "nothing half-written, nothing left
// behind" and "never trust a file's headers": the staging directory and
// OutputSet, symbolic-link outputs, stale staging from killed runs, the ELF
// check before dlopen, the IR nesting limit, and .npy headers checked before
// their data is read.
//
//===----------------------------------------------------------------------===//
#include "CatchCompat.h"

#include "support/AtomicFile.h"
#include "support/ElfCheck.h"
#include "support/IrNesting.h"
#include "support/LargeStack.h"
#include "support/Npy.h"
#include "support/Staging.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace cuvil;

namespace {

/// A fresh directory, removed (two levels deep) at the end.
struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/cuvil-staging-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~Dir() { removeTree(path); }
  static void removeTree(const std::string &p) {
    if (DIR *d = ::opendir(p.c_str())) {
      while (dirent *e = ::readdir(d)) {
        if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, ".."))
          continue;
        std::string child = p + "/" + e->d_name;
        struct stat st;
        if (::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
          removeTree(child);
        else
          ::unlink(child.c_str());
      }
      ::closedir(d);
    }
    ::rmdir(p.c_str());
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    if (DIR *d = ::opendir(path.c_str())) {
      while (dirent *e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
          out.push_back(e->d_name);
      ::closedir(d);
    }
    return out;
  }
};

std::string slurp(const std::string &path) {
  Result<std::string> r = readFile(path);
  return r ? *r : "<unreadable>";
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

} // namespace

TEST_CASE("an output set publishes all its files together, or none", "[support][staging]") {
  Dir dir;
  std::string lib = dir.path + "/lib.so", header = dir.path + "/lib.h";
  REQUIRE(writeFileAtomically(lib, "old library"));
  {
    OutputSet out;
    REQUIRE(out.add(lib, "new library"));
    REQUIRE(out.add(header, "new header"));
    // Staged, not yet published: the old library is still in place.
    CHECK(slurp(lib) == "old library");
    CHECK(::access(header.c_str(), F_OK) != 0);
    // Dropped without commit: nothing changes, nothing is left.
  }
  CHECK(slurp(lib) == "old library");
  CHECK(::access(header.c_str(), F_OK) != 0);
  CHECK(dir.entries() == std::vector<std::string>{"lib.so"});

  OutputSet out;
  REQUIRE(out.add(lib, "new library"));
  REQUIRE(out.add(header, "new header"));
  REQUIRE(out.commit());
  CHECK(slurp(lib) == "new library");
  CHECK(slurp(header) == "new header");
  // The staging directory is gone once its files are published.
  CHECK(dir.entries().size() == 2);
}

TEST_CASE("an output set refuses one file given as two outputs", "[support][staging]") {
  Dir dir;
  std::string a = dir.path + "/a.so";
  REQUIRE(writeFileAtomically(a, "x"));
  REQUIRE(::symlink("a.so", (dir.path + "/b.so").c_str()) == 0);
  OutputSet out;
  REQUIRE(out.add(a, "one"));
  Status twice = out.add(dir.path + "/b.so", "two"); // the same file through a link
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code == kExitUsageError);
  CHECK(contains(twice.error().message, "two outputs"));
}

TEST_CASE("outputs are written through symbolic links", "[support][staging]") {
  Dir dir;
  std::string link = dir.path + "/link.so";
  REQUIRE(::symlink("real.so", link.c_str()) == 0);
  REQUIRE(writeFileAtomically(link, "through the link"));
  struct stat st;
  REQUIRE(::lstat(link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode)); // the link is kept
  CHECK(slurp(dir.path + "/real.so") == "through the link");

  std::string dangling = dir.path + "/dangling.so";
  REQUIRE(::symlink("missing/x.so", dangling.c_str()) == 0);
  Status s = writeFileAtomically(dangling, "x");
  REQUIRE_FALSE(s);
  CHECK(s.error().code == kExitIOError);
  CHECK(contains(s.error().message, "symbolic link"));
  CHECK(contains(s.error().message, "missing"));
  Status pre = checkOutputPath(dangling); // found before any work
  REQUIRE_FALSE(pre);
  REQUIRE(::lstat(dangling.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
}

TEST_CASE("staging left by a killed run is removed by the next; a live run's is kept", "[support][staging]") {
  Dir dir;
  // A killed run's: its lock file is free.
  std::string dead = dir.path + "/.cuvil-staging.1.dead00";
  REQUIRE(::mkdir(dead.c_str(), 0700) == 0);
  REQUIRE(writeFileAtomically(dead + "/lock", ""));
  REQUIRE(writeFileAtomically(dead + "/0.lib.so", "partial"));
  // A live run's (another process holding the lock).
  std::string live = dir.path + "/.cuvil-staging.2.live00";
  REQUIRE(::mkdir(live.c_str(), 0700) == 0);
  int pipeFds[2];
  REQUIRE(::pipe(pipeFds) == 0);
  pid_t child = ::fork();
  if (child == 0) {
    int fd = ::open((live + "/lock").c_str(), O_RDWR | O_CREAT, 0600);
    ::flock(fd, LOCK_EX);
    char c = 1;
    (void)!::write(pipeFds[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c;
  REQUIRE(::read(pipeFds[0], &c, 1) == 1);
  // The removal of the staging directories this test makes is not the
  // parent's to do: each test directory is its own.
  removeStaleStaging(dir.path);
  CHECK(::access(dead.c_str(), F_OK) != 0);
  CHECK(::access(live.c_str(), F_OK) == 0);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  // Its owner killed, the live one is stale now.
  removeStaleStaging(dir.path);
  CHECK(::access(live.c_str(), F_OK) != 0);
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
}

TEST_CASE("a failed export leaves no staging directory at exit or on SIGTERM", "[support][staging]") {
  Dir dir;
  std::string out = dir.path + "/lib.so";
  pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGTERM, SIG_DFL); // not Catch's report of a fatal signal
    Result<std::string> staged = stagingPathFor(out);
    if (!staged)
      ::_exit(2);
    int fd = ::open(staged->c_str(), O_WRONLY | O_CREAT, 0600);
    (void)!::write(fd, "partial", 7);
    ::close(fd);
    ::raise(SIGTERM); // the handlers remove the staging directory first
    ::_exit(3);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM); // then the signal's default: death by it
  CHECK(dir.entries().empty());
}

TEST_CASE("libraries are checked before dlopen", "[support][elf]") {
  Dir dir;
  // This test binary is an ELF executable of the host: the checks reach the
  // type (not a shared library), after the identification and machine.
  Result<std::string> self = readFile("/proc/self/exe");
  REQUIRE(self);
  std::string exe = dir.path + "/exe.so";
  REQUIRE(writeFileAtomically(exe, *self));
  auto err = [&](const std::string &bytes, uint16_t machine = hostElfMachine()) {
    std::string p = dir.path + "/t.so";
    REQUIRE(writeFileAtomically(p, bytes));
    Status s = checkSharedLibrary(p, machine, "cuvil_abi_version");
    REQUIRE_FALSE(s);
    return s.error();
  };
  Error e = err("");
  CHECK(e.id == "CUVIL-E-LIB-NOT-ELF");
  CHECK(contains(e.message, "empty"));
  e = err("hello\n");
  CHECK(contains(e.message, "a text file"));
  e = err(std::string("!<arch>\n") + std::string(100, 'x'));
  CHECK(contains(e.message, "static archive"));
  e = err(self->substr(0, 40));
  CHECK(e.id == "CUVIL-E-LIB-TRUNCATED");
  e = err(*self, EM_AARCH64 == hostElfMachine() ? EM_X86_64 : EM_AARCH64);
  CHECK(e.id == "CUVIL-E-LIB-ARCH");
  CHECK(contains(e.message, "is a library for " + elfMachineName(hostElfMachine())));

  // A shared library of the system: complete, but not Cuvil's.
  for (const char *lib : {"/lib/x86_64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1"}) {
    Result<std::string> bytes = readFile(lib);
    if (!bytes)
      continue;
    std::string p = dir.path + "/libz.so";
    REQUIRE(writeFileAtomically(p, *bytes));
    Status s = checkSharedLibrary(p, hostElfMachine(), "cuvil_abi_version");
    REQUIRE_FALSE(s);
    CHECK(s.error().id == "CUVIL-E-LIB-NOT-CUVIL");
    CHECK(checkSharedLibrary(p, hostElfMachine(), "deflate")); // it does export deflate
    // Truncated anywhere: refused, never mapped.
    for (size_t n : {size_t(64), size_t(4096), bytes->size() / 2, bytes->size() - 1}) {
      REQUIRE(writeFileAtomically(p, bytes->substr(0, n)));
      Status t = checkSharedLibrary(p, hostElfMachine(), "deflate");
      REQUIRE_FALSE(t);
      CHECK(t.error().id == "CUVIL-E-LIB-TRUNCATED");
    }
  }
}

TEST_CASE("IR nested too deeply is refused before parsing", "[support][nesting]") {
  CHECK(checkIrNesting("module { func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> { return %a : tensor<2x3xf32> } }", "m"));
  std::string deep;
  for (int i = 0; i < 300; ++i)
    deep += "module {\n";
  Status s = checkIrNesting(deep, "deep.mlir");
  REQUIRE_FALSE(s);
  CHECK(s.error().id == "CUVIL-E-MLIR-NESTING");
  CHECK(contains(s.error().message, "deep.mlir:257:"));
  // Brackets in strings and comments, '->' and '>=' do not count.
  std::string text;
  for (int i = 0; i < 1000; ++i)
    text += "\"{{{{\" // ((((\n -> x >= 0\n";
  CHECK(checkIrNesting(text, "t"));
  std::string types = std::string(200, '<') + "f32" + std::string(200, '>');
  CHECK(checkIrNesting(types, "t"));
  CHECK_FALSE(checkIrNesting(std::string(100000, '<'), "t"));
  // Bytecode is not text.
  CHECK(checkIrNesting(std::string("ML\xef" "R") + std::string(1000, '{'), "m.mlirbc"));
}

TEST_CASE(".npy headers are checked before the data is read", "[support][npy]") {
  Dir dir;
  Tensor t(DType::Float32, {2, 8});
  std::string path = dir.path + "/x.npy";
  REQUIRE(writeNpy(path, t));
  NpyExpectation want{"input 0 (x) of 'lib.so'", DType::Float32, {2, 8}};
  CHECK(readNpy(path, &want));
  NpyExpectation any{"input 0", DType::Float32, {-1, 8}}; // a dynamic dimension
  CHECK(readNpy(path, &any));
  NpyExpectation other{"input 0 (x) of 'lib.so'", DType::Float32, {1, 3, 224, 224}};
  Result<Tensor> r = readNpy(path, &other);
  REQUIRE_FALSE(r);
  CHECK(r.error().id == "CUVIL-E-INPUT-SHAPE");
  CHECK(contains(r.error().message, "holds 2x8xf32; input 0 (x) of 'lib.so' is 1x3x224x224xf32"));

  // A valid header on a huge sparse file: refused from the sizes alone.
  std::string header = serializeNpy(t);
  header.resize(header.size() - 64);
  std::string sparse = dir.path + "/sparse.npy";
  REQUIRE(writeFileAtomically(sparse, header));
  REQUIRE(::truncate(sparse.c_str(), off_t(5) << 30) == 0);
  r = readNpy(sparse);
  REQUIRE_FALSE(r);
  CHECK(r.error().id == "CUVIL-E-NPY-SIZE");
  ::unlink(sparse.c_str());

  // A device: not a .npy file, said at once.
  r = readNpy("/dev/zero");
  REQUIRE_FALSE(r);
  CHECK(r.error().id == "CUVIL-E-NPY-HEADER");
  // Through a pipe (no size to check): the declared bytes and not one more.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::string bytes = serializeNpy(t) + "extra";
  REQUIRE(::write(fds[1], bytes.data(), bytes.size()) == ssize_t(bytes.size()));
  ::close(fds[1]);
  r = readNpy("/proc/self/fd/" + std::to_string(fds[0]));
  ::close(fds[0]);
  REQUIRE_FALSE(r);
  CHECK(r.error().id == "CUVIL-E-NPY-SIZE");
}

namespace {
/// Recursion that needs about 64 MB of stack (far past the main thread's 8).
int deep(int n) {
  volatile char frame[4096];
  frame[0] = char(n);
  return n == 0 ? frame[0] : deep(n - 1) + (frame[0] != 0);
}
} // namespace

TEST_CASE("work runs on a large stack, or inline when none can be made", "[support][stack]") {
  CHECK(runOnLargeStack([] { return deep(16000) > 0 ? 7 : 0; }) == 7);
  // A stack the system cannot give: the work still runs, on this thread.
  CHECK(runOnLargeStack([] { return 3; }, ~size_t(0) >> 1) == 3);
}
