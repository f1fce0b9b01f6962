// The timing harness: warm-up and repeat counts, rotation order, time budget, error norm, poison.
#include "kernels/cpu/harness.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace tilescope::kernels;

TEST_CASE("time_runs makes warmup + repeats calls and cycles the rotations") {
  std::vector<int> calls;
  TimingOptions options;
  options.warmup = 2;
  options.repeats = 5;
  options.min_repeats = 1;
  options.max_seconds = 1e9;
  options.rotations = 3;
  const Timing t = time_runs([&](int rotation) { calls.push_back(rotation); }, options);
  CHECK(t.repeats == 5);
  CHECK(calls == std::vector<int>{0, 1, 2, 0, 1, 2, 0});
  CHECK(t.min_ms <= t.median_ms);
}

TEST_CASE("time_runs stops at min_repeats once the time budget is spent") {
  int calls = 0;
  TimingOptions options;
  options.warmup = 0;
  options.repeats = 100;
  options.min_repeats = 3;
  options.max_seconds = 0.0;  // every run exceeds a zero budget
  const Timing t = time_runs([&](int) { ++calls; }, options);
  CHECK(t.repeats == 3);
  CHECK(calls == 3);
}

TEST_CASE("relative_error is the 2-norm ratio and flags poisoned positions") {
  const std::vector<float> ref = {3.0f, 4.0f};         // ‖ref‖ = 5
  const std::vector<float> got = {3.0f, 4.0f + 0.5f};  // ‖got − ref‖ = 0.5
  CHECK(relative_error(got.data(), ref.data(), 2) == doctest::Approx(0.1));
  CHECK(relative_error(ref.data(), ref.data(), 2) == 0.0);
  std::vector<float> unwritten = ref;
  poison(unwritten.data() + 1, 1);
  CHECK(std::isnan(unwritten[1]));
  CHECK(std::isinf(relative_error(unwritten.data(), ref.data(), 2)));
}

TEST_CASE("fill_uniform is deterministic and stays in [-1, 1)") {
  std::vector<float> a(1000), b(1000);
  fill_uniform(a.data(), a.size(), 7);
  fill_uniform(b.data(), b.size(), 7);
  CHECK(a == b);
  for (float v : a) {
    CHECK(v >= -1.0f);
    CHECK(v < 1.0f);
  }
}

TEST_CASE("host_info describes the machine") {
  const HostInfo host = host_info();
  CHECK_FALSE(host.cpu.empty());
  CHECK(host.cores >= 1);
  CHECK_FALSE(host.vector_isa.empty());
  CHECK(kernel_flags().find("-O3") != std::string::npos);
}

TEST_CASE("time_runs_interleaved alternates the runs and never reuses the set just used") {
  std::vector<std::pair<char, int>> calls;
  TimingOptions options;
  options.warmup = 1;
  options.repeats = 2;
  options.min_repeats = 1;
  options.max_seconds = 1e9;
  options.rotations = 3;
  const auto timings = time_runs_interleaved({[&](int r) {
                                                calls.push_back({'a', r});
                                              },
                                              [&](int r) {
                                                calls.push_back({'b', r});
                                              }},
                                             options);
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].repeats == 2);
  CHECK(timings[1].repeats == 2);
  // Warm-up a, b; then rounds (a, b), (a, b); the rotation counter is shared: 0 1 2 0 1 2.
  const std::vector<std::pair<char, int>> expected = {{'a', 0}, {'b', 1}, {'a', 2},
                                                      {'b', 0}, {'a', 1}, {'b', 2}};
  CHECK(calls == expected);
}
