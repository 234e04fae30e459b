//===- CacheTest.cpp - The compile cache's entries and directory ----------===//
#include "CatchCompat.h"

#include "cache/CompileCache.h"
#include "cache/Entry.h"
#include "cache/Invocation.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

using namespace cuvil::cache;

namespace {

KeyMaterial material(const std::string &model) {
  KeyMaterial m;
  m.add("level", "lib");
  m.add("model", model);
  m.add("target", "x86_64-unknown-linux-gnu");
  return m;
}

/// A fresh directory under TMPDIR, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/cuvil-cache-test.XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string entryFile(const std::string &dir, const char *level, const std::string &key) {
  return dir + "/v2/" + level + "/" + key.substr(0, 2) + "/" + key;
}

} // namespace

TEST_CASE("cache entry: round trip, and every mismatch is a miss", "[cache]") {
  KeyMaterial m = material("abc");
  std::string payload("\x7f" "ELF\0payload", 12);
  std::string entry = encodeEntry(EntryKind::Library, m, payload);
  DecodedEntry ok = decodeEntry(entry, EntryKind::Library, m.key());
  REQUIRE(ok.problem == EntryProblem::None);
  CHECK(ok.payload == payload);
  CHECK(ok.material.parts == m.parts);
  // The payload starts aligned, for readers of ELF files.
  CHECK((entry.size() - payload.size()) % 64 == 0);

  // Another key, another kind: the entry is not this one's.
  CHECK(decodeEntry(entry, EntryKind::Library, material("abd").key()).problem == EntryProblem::OtherKey);
  CHECK(decodeEntry(entry, EntryKind::Code, m.key()).problem == EntryProblem::OtherKey);
  // A header whose key does not match its material (edited) is refused.
  std::string edited = entry;
  edited.replace(edited.find("model=abc"), 9, "model=abd");
  CHECK(decodeEntry(edited, EntryKind::Library, m.key()).problem == EntryProblem::OtherKey);
  // Truncated, bit-flipped, empty, garbage: corrupt.
  CHECK(decodeEntry(entry.substr(0, entry.size() - 1), EntryKind::Library, m.key()).problem ==
        EntryProblem::Corrupt);
  std::string flipped = entry;
  flipped.back() ^= 1;
  CHECK(decodeEntry(flipped, EntryKind::Library, m.key()).problem == EntryProblem::Corrupt);
  CHECK(decodeEntry("", EntryKind::Library, m.key()).problem == EntryProblem::Corrupt);
  CHECK(decodeEntry("cuvil-cache-v1 0000\npayload", EntryKind::Library, m.key()).problem ==
        EntryProblem::Corrupt);
  for (size_t cut : {size_t(5), size_t(20), size_t(60)})
    CHECK(decodeEntry(entry.substr(0, cut), EntryKind::Library, m.key()).problem == EntryProblem::Corrupt);
}

TEST_CASE("cache key: every part counts, in order", "[cache]") {
  KeyMaterial a = material("x"), b = material("x"), c = material("y");
  CHECK(a.key() == b.key());
  CHECK(a.key() != c.key());
  CHECK(a.key().size() == 64);
  KeyMaterial joined, split;
  joined.parts = {"ab", "c"};
  split.parts = {"a", "bc"};
  CHECK(joined.key() != split.key());
  CHECK(KeyMaterial::parse(a.text()).parts == a.parts);
}

TEST_CASE("cache sizes: parsed and printed", "[cache]") {
  CHECK(parseSize("5G") == uint64_t(5) << 30);
  CHECK(parseSize("512M") == uint64_t(512) << 20);
  CHECK(parseSize("1.5KiB") == uint64_t(1536));
  CHECK(parseSize("100") == uint64_t(100));
  CHECK_FALSE(parseSize("lots"));
  CHECK_FALSE(parseSize("-1G"));
  CHECK_FALSE(parseSize("3X"));
  CHECK(formatBytes(1536) == "1.5 KiB");
}

TEST_CASE("cache directory: private, stores, serves and checks", "[cache]") {
  TempDir tmp;
  std::string dir = tmp.path + "/cache";
  CompileCache cache(CacheOptions{dir, "", uint64_t(1) << 30});
  REQUIRE(cache.enabled());
  struct stat st;
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  KeyMaterial m = material("one");
  CHECK_FALSE(cache.lookup(EntryKind::Library, m));
  cache.store(EntryKind::Library, m, "library bytes");
  std::optional<CacheHit> hit = cache.lookup(EntryKind::Library, m);
  REQUIRE(hit);
  CHECK(hit->payload == "library bytes");
  CHECK(cache.counters(EntryKind::Library).hits == 1);
  CHECK(cache.counters(EntryKind::Library).misses == 1);
  // The payload check has the last word.
  CHECK_FALSE(cache.lookup(EntryKind::Library, m, [](llvm::StringRef) { return "not a library"; }));
  CHECK(cache.counters(EntryKind::Library).refused == 1);
  // The levels do not mix.
  CHECK_FALSE(cache.lookup(EntryKind::Code, m));

  // An entry others can write to is refused, whatever it holds.
  std::string path = entryFile(dir, "lib", m.key());
  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  CHECK_FALSE(cache.lookup(EntryKind::Library, m));
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  CHECK(cache.lookup(EntryKind::Library, m));
  if (::geteuid() == 0) { // only root can give a file away
    REQUIRE(::chown(path.c_str(), 65534, 65534) == 0);
    CHECK_FALSE(cache.lookup(EntryKind::Library, m));
    REQUIRE(::chown(path.c_str(), 0, 0) == 0);
  }

  // A corrupt entry is a miss, and the next store replaces it.
  spit(path, "garbage");
  CHECK_FALSE(cache.lookup(EntryKind::Library, m));
  CHECK(cache.counters(EntryKind::Library).corrupt == 1);
  cache.store(EntryKind::Library, m, "library bytes");
  CHECK(cache.lookup(EntryKind::Library, m));

  // The build record of an output.
  CHECK_FALSE(cache.lastBuild("/out/lib.so"));
  cache.recordBuild("/out/lib.so", m);
  REQUIRE(cache.lastBuild("/out/lib.so"));
  CHECK(cache.lastBuild("/out/lib.so")->parts == m.parts);

  // Counters add up in the directory.
  cache.flushStats();
  DirectoryStats s = directoryStats(dir);
  CHECK(s.counters["lib.hits"] == 3);
  CHECK(s.counters["lib.corrupt"] == 1);
  CHECK(s.entries[0] == 1);
  CHECK(clearDirectory(dir) == 1);
  CHECK(directoryStats(dir).entries[0] == 0);
}

TEST_CASE("cache directory: refused when others can write to it, or unusable", "[cache]") {
  TempDir tmp;
  std::string shared = tmp.path + "/shared";
  REQUIRE(::mkdir(shared.c_str(), 0700) == 0);
  REQUIRE(::chmod(shared.c_str(), 0777) == 0);
  CompileCache open(CacheOptions{shared, "", uint64_t(1) << 30});
  CHECK_FALSE(open.enabled());
  open.store(EntryKind::Library, material("x"), "bytes"); // a no-op, not a crash
  CHECK(listEntries(shared).empty());

  std::string file = tmp.path + "/file";
  spit(file, "x");
  CompileCache notADir(CacheOptions{file, "", uint64_t(1) << 30});
  CHECK_FALSE(notADir.enabled());
}

TEST_CASE("cache directory: least recently used entries go past the limit", "[cache]") {
  TempDir tmp;
  std::string dir = tmp.path + "/cache";
  std::string payload(4000, 'x');
  {
    CompileCache cache(CacheOptions{dir, "", uint64_t(1) << 30});
    for (const char *name : {"old", "used", "new"})
      cache.store(EntryKind::Code, material(name), payload);
  }
  // Ages: "old" and "used" a day old, "new" an hour; then "used" is read.
  auto age = [&](const char *name, int seconds) {
    struct timeval t[2];
    ::gettimeofday(&t[0], nullptr);
    t[0].tv_sec -= seconds;
    t[1] = t[0];
    REQUIRE(::utimes(entryFile(dir, "code", material(name).key()).c_str(), t) == 0);
  };
  age("old", 86400);
  age("used", 86400);
  age("new", 3600);
  CompileCache cache(CacheOptions{dir, "", 13000});
  REQUIRE(cache.lookup(EntryKind::Code, material("used")));
  cache.store(EntryKind::Code, material("newest"), payload); // over the limit
  CHECK_FALSE(cache.lookup(EntryKind::Code, material("old")));
  CHECK(cache.lookup(EntryKind::Code, material("used")));
  CHECK(cache.lookup(EntryKind::Code, material("newest")));
  CHECK(directoryStats(dir).bytes[1] <= 13000);
  // An explicit trim to nothing.
  CHECK(trimDirectory(dir, 0) >= 1);
  CHECK(listEntries(dir).empty());
}

// --- The launcher's check (cache/Invocation.h) ---------------------------

TEST_CASE("invocation digest: the same run agrees, any difference does not", "[cache][invocation]") {
  std::vector<std::string> args{"--model", "m.pt", "-o", "out.so", "--cache-dir", "c"};
  std::string base = invocationDigest(args);
  CHECK(base == invocationDigest(args));
  CHECK(hostFingerprint() == hostFingerprint());
  CHECK_FALSE(hostFingerprint().empty());

  // An argument changed, added, moved, or split differently.
  CHECK(invocationDigest({"--model", "n.pt", "-o", "out.so", "--cache-dir", "c"}) != base);
  std::vector<std::string> more = args;
  more.push_back("-v");
  CHECK(invocationDigest(more) != base);
  CHECK(invocationDigest({"-o", "out.so", "--model", "m.pt", "--cache-dir", "c"}) != base);
  CHECK(invocationDigest({"--model m.pt", "-o", "out.so", "--cache-dir", "c"}) != base);

  // A variable the compile reads; one it does not read changes nothing.
  ::setenv("CUVIL_INVOCATION_TEST", "1", 1);
  std::string withVariable = invocationDigest(args);
  ::unsetenv("CUVIL_INVOCATION_TEST");
  CHECK(withVariable != base);
  ::setenv("UNRELATED_INVOCATION_TEST", "1", 1);
  CHECK(invocationDigest(args) == base);
  ::unsetenv("UNRELATED_INVOCATION_TEST");

  // Another working directory (relative paths mean other files).
  TempDir t;
  char cwd[4096];
  REQUIRE(::getcwd(cwd, sizeof cwd));
  REQUIRE(::chdir(t.path.c_str()) == 0);
  std::string elsewhere = invocationDigest(args);
  REQUIRE(::chdir(cwd) == 0);
  CHECK(elsewhere != base);
}

TEST_CASE("watched files: written, replaced, removed or created since is a change", "[cache][invocation]") {
  TempDir t;
  std::string model = t.path + "/model.pt", header = t.path + "/dir with space/runtime.h";
  spit(model, "weights");
  KeyMaterial record;
  record.add("watch", watchValue(model));
  record.add("watch", watchValue(header)); // not there yet
  std::string path, state;
  REQUIRE(parseWatchValue(watchValue(header), path, state));
  CHECK(path == header);
  CHECK(state == "-");
  CHECK(watchedFilesUnchanged(record));

  // Rewritten with the same bytes: its change time moved.
  ::usleep(20000);
  spit(model, "weights");
  CHECK_FALSE(watchedFilesUnchanged(record));
  record.parts[0] = "watch=" + watchValue(model);
  CHECK(watchedFilesUnchanged(record));

  // A file that was missing and now exists.
  REQUIRE(::mkdir((t.path + "/dir with space").c_str(), 0700) == 0);
  spit(header, "header");
  CHECK_FALSE(watchedFilesUnchanged(record));
  record.parts[1] = "watch=" + watchValue(header);
  CHECK(watchedFilesUnchanged(record));

  // Removed; replaced by another file under the same name.
  ::unlink(model.c_str());
  CHECK_FALSE(watchedFilesUnchanged(record));
  spit(model + ".new", "weights");
  REQUIRE(::rename((model + ".new").c_str(), model.c_str()) == 0);
  CHECK_FALSE(watchedFilesUnchanged(record));

  // A malformed part is never taken for unchanged.
  KeyMaterial bad;
  bad.add("watch", "no-path");
  CHECK_FALSE(watchedFilesUnchanged(bad));
  CHECK(partValue(record, "watch").find(model) != std::string::npos);
  CHECK(partValue(record, "missing").empty());
}

TEST_CASE("a file's digest is its bytes' digest, read in pieces", "[cache]") {
  TempDir t;
  std::string path = t.path + "/model.pt";
  // Across the reads' megabyte boundaries, and an empty file.
  for (size_t size : {size_t(0), size_t(1), size_t(1) << 20, (size_t(3) << 20) + 12345}) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i)
      bytes[i] = char((i * 2654435761u) >> 13);
    spit(path, bytes);
    std::optional<std::string> d = digestFile(path);
    REQUIRE(d);
    CHECK(*d == digest(bytes));
  }
  CHECK_FALSE(digestFile(t.path + "/missing"));
  CHECK_FALSE(digestFile(t.path)); // a directory is not read
}
