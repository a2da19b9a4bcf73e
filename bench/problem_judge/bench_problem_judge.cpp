// What judging one trial of a large problem's check costs the orchestrator (issue 16, item 2:
// on the H200 it was 8-17 s a trial for KernelBench's 4 GiB outputs, the check's main cost),
// against a baseline measured in the same run: reading the trial's file once, plainly (one
// thread, into a zeroed buffer, as kbench's reader did before). The outputs are
// smooth random values (no trivial answer passes, every trial differs), written as the worker
// writes them; the judge reads each file as `kbench problems check` does.
// Usage: build/bench_problem_judge [MiB per output, default 512] [trials, default 3]
#include "bench/seconds.hpp"
#include "checks/problem_findings.hpp"
#include "compare/safetensors.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

namespace {

namespace fs = std::filesystem;
using kbench::compare::DType;

// Values in [-3, 3), different for every trial; 4096 columns so that uniform_axes has two axes.
kbench::compare::TensorFile trial_outputs(std::size_t mib, int trial) {
  const std::size_t cols = 4096;
  const std::size_t rows = std::max<std::size_t>(1, mib * (1u << 20) / (cols * sizeof(float)));
  kbench::compare::Tensor t;
  t.dtype = DType::F32;
  t.shape = {static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols)};
  t.data.resize(rows * cols * sizeof(float));
  std::minstd_rand rng(static_cast<std::uint32_t>(trial + 1));
  float* values = reinterpret_cast<float*>(t.data.data());
  for (std::size_t i = 0; i < rows * cols; ++i) {
    values[i] = static_cast<float>(rng()) * (6.0f / 2147483647.0f) - 3.0f;
  }
  kbench::compare::TensorFile file;
  file.tensors.emplace("output.0", std::move(t));
  return file;
}

} // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 512;
  const int trials = argc > 2 ? std::atoi(argv[2]) : 3;
  const fs::path dir = fs::temp_directory_path() / fmt::format("bench_problem_judge_{}", getpid());
  fs::create_directories(dir);
  kbench::checks::ProblemJudge judge(kbench::compare::ToleranceOverride{});
  fmt::print("| trial | output | read once (baseline) | judge | judge / read |\n"
             "| --- | --- | --- | --- | --- |\n");
  double read_total = 0, judge_total = 0;
  for (int i = 0; i < trials; ++i) {
    kbench::checks::TrialFacts trial;
    trial.index = i;
    trial.ran = true;
    trial.repeat_identical = trial.unseeded_identical = true;
    trial.outputs = dir / fmt::format("trial_{}.outputs.safetensors", i);
    kbench::compare::write_safetensors(trial.outputs, trial_outputs(mib, i));
    const double read_s = kbench::bench::seconds([&] {
      std::ifstream in(trial.outputs, std::ios::binary);
      std::vector<char> bytes(fs::file_size(trial.outputs));
      in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    });
    const double judge_s = kbench::bench::seconds([&] { judge.add_trial(trial); });
    read_total += read_s;
    judge_total += judge_s;
    fmt::print("| {} | {} MiB fp32 | {:.3f} s | {:.3f} s | {:.1f}x |\n", i, mib, read_s, judge_s,
               judge_s / read_s);
  }
  kbench::checks::ProblemFacts facts;
  const double findings_s = kbench::bench::seconds([&] { (void)judge.findings(facts); });
  fmt::print("| all | | {:.3f} s | {:.3f} s (+ findings {:.3f} s) | {:.1f}x |\n", read_total,
             judge_total, findings_s, (judge_total + findings_s) / read_total);
  fs::remove_all(dir);
}
