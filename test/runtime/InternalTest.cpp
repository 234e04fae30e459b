//===- InternalTest.cpp - The runtime's thread pool and CPU detection -----===//
//
// Linked directly against the runtime archive to reach the hidden helpers
// (runtime/core/internal.h) that the API tests only see from outside.
//
//===----------------------------------------------------------------------===//
#include "core/internal.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct ThreadPool {
  cuvil_thread_pool *pool;
  explicit ThreadPool(int32_t threads) {
    int error = -1;
    pool = cuvil_thread_pool_create(threads, &error);
    REQUIRE(pool != nullptr);
    REQUIRE(error == 0);
  }
  ~ThreadPool() { cuvil_thread_pool_destroy(pool); }
};

// Records every block a parallel_for hands out.
struct Recorder {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> blocks;
  std::vector<std::atomic<int>> visits;
  explicit Recorder(int64_t n) : visits(static_cast<size_t>(n)) {}
  static void body(void *closure, int64_t begin, int64_t end) {
    auto *self = static_cast<Recorder *>(closure);
    for (int64_t i = begin; i < end; ++i)
      self->visits[static_cast<size_t>(i)]++;
    std::lock_guard<std::mutex> lock(self->mutex);
    self->blocks.emplace_back(begin, end);
  }
};

} // namespace

TEST_CASE("thread_pool_static_block_split", "[threads]") {
  for (int32_t threads : {1, 2, 3, 4, 7, 16}) {
    ThreadPool pool(threads);
    CHECK(cuvil_thread_pool_size(pool.pool) == threads);
    for (int64_t n : {0, 1, 2, 3, 5, 7, 8, 16, 17, 1000, 100003}) {
      INFO("threads " << threads << ", n " << n);
      Recorder recorder(n);
      cuvil_rt_parallel_for(pool.pool, n, Recorder::body, &recorder);
      for (int64_t i = 0; i < n; ++i)
        REQUIRE(recorder.visits[static_cast<size_t>(i)] == 1);
      int64_t expectedBlocks = n <= 0 ? 0 : n == 1 ? 1 : std::min<int64_t>(threads, n);
      REQUIRE(static_cast<int64_t>(recorder.blocks.size()) == expectedBlocks);
      // Contiguous blocks whose sizes differ by at most one, larger first.
      std::sort(recorder.blocks.begin(), recorder.blocks.end());
      int64_t next = 0;
      for (size_t b = 0; b < recorder.blocks.size(); ++b) {
        CHECK(recorder.blocks[b].first == next);
        next = recorder.blocks[b].second;
        int64_t size = recorder.blocks[b].second - recorder.blocks[b].first;
        CHECK(size >= n / expectedBlocks);
        CHECK(size <= n / expectedBlocks + 1);
        if (b > 0)
          CHECK(size <= recorder.blocks[b - 1].second - recorder.blocks[b - 1].first);
      }
      CHECK(next == n);
    }
  }
}

TEST_CASE("thread_pool_runs_inline_without_a_pool_or_when_nested", "[threads]") {
  Recorder inlineRecorder(10);
  cuvil_rt_parallel_for(nullptr, 10, Recorder::body, &inlineRecorder);
  CHECK(inlineRecorder.blocks.size() == 1);

  // A body that starts its own parallel_for: the inner one runs inline.
  ThreadPool pool(4);
  struct Nested {
    cuvil_thread_pool *pool;
    std::atomic<int> innerBlocks{0};
    std::atomic<int64_t> innerElements{0};
    std::atomic<int> sizeNotOne{0};
  } nested{pool.pool};
  cuvil_rt_parallel_for(
      pool.pool, 8,
      [](void *closure, int64_t begin, int64_t end) {
        auto *outer = static_cast<Nested *>(closure);
        // Kernels inside a body plan for the one thread they run on.
        if (cuvil_thread_pool_size(outer->pool) != 1)
          outer->sizeNotOne++;
        for (int64_t i = begin; i < end; ++i)
          cuvil_rt_parallel_for(
              outer->pool, 100,
              [](void *innerClosure, int64_t b, int64_t e) {
                auto *n = static_cast<Nested *>(innerClosure);
                n->innerBlocks++;
                n->innerElements += e - b;
              },
              outer);
      },
      &nested);
  CHECK(nested.innerBlocks == 8);
  CHECK(nested.innerElements == 800);
  CHECK(nested.sizeNotOne == 0);
  CHECK(cuvil_thread_pool_size(pool.pool) == 4);
}

TEST_CASE("thread_pool_survives_many_small_jobs", "[threads]") {
  ThreadPool pool(4);
  std::atomic<int64_t> total{0};
  for (int job = 0; job < 20000; ++job)
    cuvil_rt_parallel_for(
        pool.pool, 1 + job % 6,
        [](void *closure, int64_t begin, int64_t end) {
          *static_cast<std::atomic<int64_t> *>(closure) += end - begin;
        },
        &total);
  int64_t expected = 0;
  for (int job = 0; job < 20000; ++job)
    expected += 1 + job % 6;
  CHECK(total == expected);
}

TEST_CASE("thread_pool_caller_takes_the_blocks_no_worker_has_claimed", "[threads]") {
  // Workers asleep (idle past their spin) take tens of microseconds to wake:
  // a job of tiny blocks is then done by the caller alone, which does not
  // wait for them (a virtual CPU the machine took away does not hold a call
  // up). Waking late, they must not touch the finished job's closure (on
  // the caller's stack): no block recorded twice, none of another job.
  ThreadPool pool(4);
  struct Ids {
    std::mutex mutex;
    std::vector<std::thread::id> ids;
  };
  // A busy machine can still wake a worker first now and then: one attempt
  // of up to 200 must see it.
  bool callerDidAll = false;
  for (int attempt = 0; attempt < 200 && !callerDidAll; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    Ids ids;
    cuvil_rt_parallel_for(
        pool.pool, 4,
        [](void *closure, int64_t, int64_t) {
          auto *self = static_cast<Ids *>(closure);
          std::lock_guard<std::mutex> lock(self->mutex);
          self->ids.push_back(std::this_thread::get_id());
        },
        &ids);
    REQUIRE(ids.ids.size() == 4);
    callerDidAll = std::all_of(ids.ids.begin(), ids.ids.end(),
                               [](std::thread::id id) { return id == std::this_thread::get_id(); });
  }
  CHECK(callerDidAll);
}

TEST_CASE("thread_pool_create_and_destroy_repeatedly", "[threads]") {
  for (int round = 0; round < 200; ++round) {
    ThreadPool pool(1 + round % 5);
    Recorder recorder(13);
    cuvil_rt_parallel_for(pool.pool, 13, Recorder::body, &recorder);
    for (int i = 0; i < 13; ++i)
      REQUIRE(recorder.visits[static_cast<size_t>(i)] == 1);
  }
}

#if defined(__x86_64__)
TEST_CASE("cpu_detection_agrees_with_the_compiler", "[cpu]") {
  CHECK(std::string(cuvil_runtime_target()) == "x86_64");
  CHECK(cuvil_cpu_detects_feature("64bit"));
  CHECK(cuvil_cpu_detects_feature("sse2"));
  // compiler-rt's __builtin_cpu_supports also checks XCR0 for AVX/AVX-512.
#define AGREES(name) CHECK(cuvil_cpu_detects_feature(name) == !!__builtin_cpu_supports(name))
  AGREES("sse3");
  AGREES("ssse3");
  AGREES("sse4.1");
  AGREES("sse4.2");
  AGREES("popcnt");
  AGREES("avx");
  AGREES("avx2");
  AGREES("fma");
  AGREES("bmi");
  AGREES("bmi2");
  AGREES("avx512f");
  AGREES("avx512bw");
  AGREES("avx512dq");
  AGREES("avx512vl");
  AGREES("avx512cd");
  AGREES("avx512vnni");
  AGREES("avx512bf16");
  AGREES("avx512vbmi");
  AGREES("avx512fp16");
#undef AGREES
  // Feature chains the hardware guarantees.
  if (cuvil_cpu_detects_feature("avx2"))
    CHECK(cuvil_cpu_detects_feature("avx"));
  if (cuvil_cpu_detects_feature("avx512bw"))
    CHECK(cuvil_cpu_detects_feature("avx512f"));
  if (cuvil_cpu_detects_feature("amx-int8"))
    CHECK(cuvil_cpu_detects_feature("amx-tile"));
  char name[64];
  cuvil_cpu_describe(name, sizeof(name));
  CHECK(name[0] != ' ');
}
#endif

TEST_CASE("cpu_unknown_features_count_as_missing", "[cpu]") {
  CHECK_FALSE(cuvil_cpu_feature_known("cuvil-test-feature"));
  CHECK_FALSE(cuvil_cpu_detects_feature("cuvil-test-feature"));
  CHECK_FALSE(cuvil_cpu_detects_feature(""));
  CHECK_FALSE(cuvil_cpu_detects_feature("+avx2")); // names come without '+'
#if defined(__x86_64__)
  for (const char *name : {"sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                           "avx512dq", "avx512vl", "avx512vnni", "avx512bf16", "amx-tile",
                           "amx-int8", "amx-bf16"})
#else
  for (const char *name : {"neon", "fp-armv8", "dotprod", "fullfp16", "i8mm", "bf16", "sve"})
#endif
  {
    INFO(name);
    CHECK(cuvil_cpu_feature_known(name));
  }
}

TEST_CASE("cpu_test_hook_parses_its_list", "[cpu]") {
  unsetenv("CUVIL_TEST_HIDE_CPU_FEATURES");
  CHECK_FALSE(cuvil_cpu_feature_hidden_for_test("avx2"));
  setenv("CUVIL_TEST_HIDE_CPU_FEATURES", " sse4.2 ,avx2,,amx-tile , x", 1);
  CHECK(cuvil_cpu_feature_hidden_for_test("sse4.2"));
  CHECK(cuvil_cpu_feature_hidden_for_test("avx2"));
  CHECK(cuvil_cpu_feature_hidden_for_test("amx-tile"));
  CHECK(cuvil_cpu_feature_hidden_for_test("x"));
  CHECK_FALSE(cuvil_cpu_feature_hidden_for_test("avx"));
  CHECK_FALSE(cuvil_cpu_feature_hidden_for_test("sse4"));
  CHECK_FALSE(cuvil_cpu_feature_hidden_for_test("amx"));
  CHECK_FALSE(cuvil_cpu_feature_hidden_for_test(""));
  setenv("CUVIL_TEST_HIDE_CPU_FEATURES", "", 1);
  CHECK_FALSE(cuvil_cpu_feature_hidden_for_test("sse4.2"));
  unsetenv("CUVIL_TEST_HIDE_CPU_FEATURES");
}
