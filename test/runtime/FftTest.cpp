//===- FftTest.cpp - The DFT kernel against a long-double DFT -------------===//
//
// cuvil_rt_dft (fft.c) is radix-2 for powers of two and Bluestein's
// chirp-z for every other length. Both are checked against the defining sum
// evaluated in long double, forward and inverse, for lengths that exercise
// each path (1, 2, primes, products of small primes, powers of two, the
// audio frame sizes 400 and 1000), on batches, in place and out of place.
// Computed in double, the kernel is within a few ulps of the sum scaled by
// the row's magnitude; f32 rows are rounded results of the same double
// computation.
//
//===----------------------------------------------------------------------===//
#include "cpu/fft.h"
#include "core/internal.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace {

std::vector<double> reference(const std::vector<double> &x, int64_t batch, int64_t n, bool inverse) {
  std::vector<double> out(x.size());
  const long double pi = 3.141592653589793238462643383279502884L;
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t k = 0; k < n; ++k) {
      long double re = 0, im = 0;
      for (int64_t j = 0; j < n; ++j) {
        long double a = (inverse ? 2 : -2) * pi * static_cast<long double>((j * k) % n) / n;
        long double xr = x[2 * (r * n + j)], xi = x[2 * (r * n + j) + 1];
        re += xr * std::cos(a) - xi * std::sin(a);
        im += xr * std::sin(a) + xi * std::cos(a);
      }
      out[2 * (r * n + k)] = static_cast<double>(re);
      out[2 * (r * n + k) + 1] = static_cast<double>(im);
    }
  return out;
}

std::vector<double> randomRows(int64_t batch, int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<double> x(static_cast<size_t>(2 * batch * n));
  for (double &v : x)
    v = dist(gen);
  return x;
}

} // namespace

TEST_CASE("dft matches the defining sum for every path and length", "[runtime][fft]") {
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 64, 100, 128, 400, 1000}) {
    for (bool inverse : {false, true}) {
      const int64_t batch = 3;
      std::vector<double> x = randomRows(batch, n, static_cast<unsigned>(n * 2 + inverse));
      std::vector<double> want = reference(x, batch, n, inverse);
      std::vector<double> scratch(static_cast<size_t>(cuvil_dft_scratch(n)));
      int64_t params[CUVIL_DFT_PARAMS] = {batch, n, inverse ? 1 : 0};
      std::vector<double> got(x.size());
      cuvil_rt_dft_f64(params, x.data(), got.data(), scratch.data());
      double scaleOf = std::sqrt(static_cast<double>(n)); // |X| grows as sqrt(n)
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::abs(got[i] - want[i]) / scaleOf);
      INFO("n = " << n << (inverse ? " inverse" : " forward") << ", worst error " << worst);
      CHECK(worst < 1e-13);

      // In place: the output is the input buffer.
      std::vector<double> inPlace = x;
      cuvil_rt_dft_f64(params, inPlace.data(), inPlace.data(), scratch.data());
      CHECK(inPlace == got);

      // f32: the rounded double result.
      std::vector<float> xf(x.begin(), x.end()), gotf(x.size());
      std::vector<double> xr(xf.begin(), xf.end());
      std::vector<double> wantf = reference(xr, batch, n, inverse);
      cuvil_rt_dft_f32(params, xf.data(), gotf.data(), scratch.data());
      double worstf = 0;
      for (size_t i = 0; i < gotf.size(); ++i)
        worstf = std::max(worstf, std::abs(gotf[i] - wantf[i]) / std::max(1.0, std::abs(wantf[i])));
      CHECK(worstf < 1e-6);
    }
  }
}

TEST_CASE("dft over blocks of 8 rows: partial blocks, threads, both passes", "[runtime][fft]") {
  int error = 0;
  cuvil_thread_pool *pool = cuvil_thread_pool_create(2, &error);
  REQUIRE(pool);
  for (int64_t n : {2, 16, 64, 400, 45}) {
    for (int64_t batch : {1, 8, 19}) {
      const bool inverse = batch == 19;
      std::vector<double> x = randomRows(batch, n, static_cast<unsigned>(n + batch));
      std::vector<double> want = reference(x, batch, n, inverse);
      for (bool generic : {false, true}) {
        for (void *exec : {static_cast<void *>(pool), static_cast<void *>(nullptr)}) {
          std::vector<double> scratch(static_cast<size_t>(cuvil_dft_scratch(n)));
          int64_t params[CUVIL_DFT_PARAMS] = {batch, n, inverse ? 1 : 0};
          std::vector<double> got(x.size());
          cuvil_dft_generic_passes_for_test(generic);
          cuvil_rt_current_exec = exec;
          cuvil_rt_dft_f64(params, x.data(), got.data(), scratch.data());
          cuvil_rt_current_exec = nullptr;
          cuvil_dft_generic_passes_for_test(false);
          double worst = 0;
          for (size_t i = 0; i < got.size(); ++i)
            worst = std::max(worst, std::abs(got[i] - want[i]) / std::sqrt(static_cast<double>(n)));
          INFO("n = " << n << ", batch " << batch << (generic ? ", portable passes" : "")
                      << (exec ? ", 2 threads" : "") << ", worst error " << worst);
          CHECK(worst < 1e-13);
        }
      }
    }
  }
  cuvil_thread_pool_destroy(pool);
}

TEST_CASE("dft forward then inverse is n times the identity", "[runtime][fft]") {
  // 20000: Bluestein over 65536 points, more than 8 rows fit in a
  // thread's scratch (row by row, in the caller's).
  for (int64_t n : {6, 9, 256, 243, 20000}) {
    std::vector<double> x = randomRows(2, n, 7);
    std::vector<double> scratch(static_cast<size_t>(cuvil_dft_scratch(n)));
    int64_t fwd[CUVIL_DFT_PARAMS] = {2, n, 0}, inv[CUVIL_DFT_PARAMS] = {2, n, 1};
    std::vector<double> y(x.size());
    cuvil_rt_dft_f64(fwd, x.data(), y.data(), scratch.data());
    cuvil_rt_dft_f64(inv, y.data(), y.data(), scratch.data());
    for (size_t i = 0; i < x.size(); ++i)
      CHECK(y[i] / static_cast<double>(n) == Approx(x[i]).margin(1e-12));
  }
}

TEST_CASE("dft of an empty batch or empty rows writes nothing", "[runtime][fft]") {
  double scratch[1];
  int64_t params[CUVIL_DFT_PARAMS] = {0, 8, 0};
  cuvil_rt_dft_f64(params, nullptr, nullptr, scratch);
  int64_t empty[CUVIL_DFT_PARAMS] = {4, 0, 0};
  cuvil_rt_dft_f64(empty, nullptr, nullptr, scratch);
  SUCCEED("no buffer was touched");
}
