// Building a suite's candidates in parallel (pipeline/suite_prebuild.hpp).
#include "pipeline/suite_prebuild.hpp"

#include "pipeline/evaluation.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

namespace kbench {

std::vector<EvalResult> prebuild(const std::vector<EvalOptions>& builds, int jobs) {
  std::vector<EvalResult> results(builds.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, jobs); ++j) {
    threads.emplace_back([&] {
      for (std::size_t i = next++; i < builds.size(); i = next++) {
        results[i] = evaluate(builds[i]);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  return results;
}

} // namespace kbench
