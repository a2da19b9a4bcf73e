#pragma once
// Judging a problem (not a candidate): does its reference run on every trial's shapes, is it
// deterministic under the forward seed grading sets before every call (a forward that draws
// random numbers gets a note, not an error), do its outputs depend on its inputs, can a do-nothing
// kernel pass it (KernelBench issue #165), is it launch-bound. Reads the files the reference worker
// wrote, one trial at a time (ProblemJudge), so that a trial's files can go before the next
// trial's are written: KernelBench's level-1 outputs reach 8 GiB.
#include "compare/compare_outputs.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
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
  // `unseeded` a third call without seeding again, `inputs` the inputs an output could pass
  // through (same dtype and shape). The worker writes no `repeat` (`unseeded`) file where that
  // call's outputs are bit for bit the first call's: the flag says so, and they agree.
  std::filesystem::path outputs, repeat, unseeded, inputs;
  bool repeat_identical = false;
  bool unseeded_identical = false;
  // (output, input) pairs of the same dtype and shape that the worker found farther apart on
  // the device than any tolerance allows: tried and failed, and the input is not written
  // unless another output could still be it.
  std::vector<std::pair<std::string, std::string>> passthrough_refuted;
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

// The judge, fed one trial at a time in trial order.
class ProblemJudge {
public:
  explicit ProblemJudge(compare::ToleranceOverride tolerance);
  ~ProblemJudge();
  ProblemJudge(const ProblemJudge&) = delete;
  ProblemJudge& operator=(const ProblemJudge&) = delete;

  // Reads the trial's files. Afterwards its repeat, unseeded and inputs files are not read
  // again; its outputs file is, by findings(), unless outputs_needed_again() is false.
  void add_trial(const TrialFacts& trial);
  bool outputs_needed_again() const;
  // Every finding; `facts` gives the problem-wide facts (its trials are not read again).
  std::vector<Finding> findings(const ProblemFacts& facts);

private:
  struct State;
  std::unique_ptr<State> m_state;
};

// All trials at once: ProblemJudge over facts.trials.
std::vector<Finding> judge_problem(const ProblemFacts& facts);

// True when every value lies within the tolerance of every other (max - min small).
bool near_constant(const compare::Tensor& tensor, const Tolerance& tolerance);
// The axes (of size > 1, in a tensor of two or more dimensions) along which every slice equals
// the first within the tolerance.
std::vector<int> uniform_axes(const compare::Tensor& tensor, const Tolerance& tolerance);

} // namespace kbench::checks
