#pragma once
// Judging a problem (not a candidate): does its reference run on every trial's shapes, is it
// deterministic under the forward seed grading sets before every call (a forward that draws
// random numbers gets a note, not an error), do its outputs depend on its inputs, can a do-nothing
// kernel pass it (KernelBench issue #165), is it launch-bound. Reads the files the reference worker
// wrote.
#include "compare/compare_outputs.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kbench::checks {

struct Finding {
  std::string check;    // "reference-runs", "trivial-zeros", ...
  std::string severity; // "error": grading this problem is unfair; "warn": suspicious; "info"
  std::string message;
};

struct TrialFacts {
  int index = 0;
  bool ran = false;
  std::string error; // when it did not run: the exception, one line
  nlohmann::json input_shapes;
  std::optional<bool> weights_follow_seed;
  // Files the worker wrote: `outputs` and `repeat` each under the trial's forward seed,
  // `unseeded` a third call without seeding again.
  std::filesystem::path outputs, repeat, unseeded, inputs, trivial;
};

struct ProblemFacts {
  std::vector<TrialFacts> trials;
  bool on_gpu = false;
  std::optional<double> call_us;
  std::optional<long long> peak_memory_bytes;
  std::optional<long long> device_memory_bytes;
  compare::ToleranceOverride tolerance;
};

inline constexpr double kLaunchBoundUs = 20.0;
// "Most elements below atol": the share of an output's nonzero elements that 0 matches, on
// every trial, past which the tolerance grades almost nothing (a softmax over 200,000 columns:
// 99.98 %; over the 8192 columns of problems/level1/3_softmax.py: about 62 %).
inline constexpr double kMostlyBelowAtolShare = 0.9;

std::vector<Finding> judge_problem(const ProblemFacts& facts);

// True when every value lies within the tolerance of every other (max - min small).
bool near_constant(const compare::Tensor& tensor, const Tolerance& tolerance);
// The axes (of size > 1, in a tensor of two or more dimensions) along which every slice equals
// the first within the tolerance.
std::vector<int> uniform_axes(const compare::Tensor& tensor, const Tolerance& tolerance);

} // namespace kbench::checks
