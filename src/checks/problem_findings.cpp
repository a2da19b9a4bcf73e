#include "checks/problem_findings.hpp"

#include "compare/element_blocks.hpp"
#include "compare/trivial_answers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace kbench::checks {
namespace {

using compare::Tensor;
using compare::TensorFile;

bool within(double a, double b, const Tolerance& t) {
  return compare::within_tolerance(a, b, t.atol, t.rtol);
}

std::optional<TensorFile> read(const std::filesystem::path& path) {
  if (path.empty() || !std::filesystem::exists(path)) {
    return std::nullopt;
  }
  return compare::read_safetensors(path);
}

std::string trial_label(const TrialFacts& t) {
  return fmt::format("trial {} (inputs {})", t.index, t.input_shapes.dump());
}

// A trivial answer "passes" a problem when it passes on every trial that ran.
struct TrivialTally {
  int passed = 0;
  int tried = 0;
};

// The trial's own mean, rounded to the output's dtype: the "constant" a kernel could write
// after reading nothing but its output's shape.
double mean_in_dtype(const Tensor& reference) {
  const std::size_t n = reference.numel();
  // Summed a block per thread and the blocks in order (element_blocks.hpp): the same sum on
  // any machine.
  const auto sums = compare::over_element_blocks<double>(n, [&](std::size_t begin,
                                                                std::size_t size) {
    double sum = 0;
    compare::decode_chunks(reference, begin, size, [&](const double* values, std::size_t count) {
      for (std::size_t j = 0; j < count; ++j) {
        sum += values[j];
      }
      return true;
    });
    return sum;
  });
  double sum = 0;
  for (const auto& block : sums) {
    sum += *block;
  }
  return compare::round_to_dtype(n ? sum / static_cast<double>(n) : 0.0, reference.dtype);
}

// Per output of one trial: how many elements 0 matches under the output's tolerance (one pass
// over outputs of up to 8 GiB, read by judge_trivial and tally_below_atol alike).
using ZeroCounts = std::map<std::string, std::size_t>;

ZeroCounts count_zeros(const TensorFile& outputs, const compare::ToleranceOverride& tolerance) {
  ZeroCounts counts;
  for (const auto& [name, reference] : outputs.tensors) {
    counts[name] =
        compare::count_matching(reference, 0, compare::tolerance_for(reference.dtype, tolerance));
  }
  return counts;
}

// Zeros and the trial's mean everywhere, and an input passed through, against one trial. Each
// passes when the comparator's rule (within_tolerance) holds for every element.
void judge_trivial(const TrialFacts& trial, const TensorFile& outputs, const ZeroCounts& zeros,
                   const compare::ToleranceOverride& tolerance,
                   std::map<std::string, TrivialTally>& tally) {
  const auto inputs = read(trial.inputs);
  for (const auto& [name, reference] : outputs.tensors) {
    const Tolerance tol = compare::tolerance_for(reference.dtype, tolerance);
    auto attempt = [&](const std::string& kind, bool passed) {
      auto& t = tally[kind + " for " + name];
      ++t.tried;
      t.passed += passed ? 1 : 0;
    };
    const std::size_t n = reference.numel();
    attempt("zeros", zeros.at(name) == n);
    // A one-element output's "constant" (its own mean) is the answer itself, not a shortcut;
    // whether it depends on the inputs is depends-on-inputs' question.
    if (n >= 2) {
      attempt("constant", compare::all_matching(reference, mean_in_dtype(reference), tol));
    }
    if (inputs) {
      for (const auto& [input_name, input] : inputs->tensors) {
        if (input.dtype == reference.dtype && input.shape == reference.shape) {
          attempt(input_name + " passed through",
                  compare::all_within_tolerance(input, reference, tol));
        }
      }
    }
    for (const auto& [output_name, input_name] : trial.passthrough_refuted) {
      if (output_name == name) {
        attempt(input_name + " passed through", false);
      }
    }
  }
}

// One constant for every trial, found exactly (compare::TrivialAnswerSearch). Zeros and each
// trial's mean are judge_trivial's job, which also counts the trials they pass on; a constant
// is new only where zeros fail.
void report_constants(const std::vector<compare::TrivialAnswer>& answers,
                      std::vector<Finding>& findings) {
  for (const auto& answer : answers) {
    if (answer.kind == compare::TrivialKind::constant) {
      findings.push_back({"trivial-answer", "error",
                          fmt::format("{}: a kernel that returns it computes nothing and would "
                                      "be graded correct",
                                      compare::describe_trivial_answer(answer))});
    }
  }
}

struct BelowAtol {
  double share = 2; // of the elements that are not exactly 0: within the tolerance of 0
  std::size_t below = 0, nonzero = 0, numel = 0;
  int trial = 0;
  Tolerance tolerance;
  bool every_trial = true;
};

// Elements that are not 0 but that 0 matches: the tolerance cannot tell them from nothing.
// Exact zeros are left out (a ReLU's are structure, and 0 is their right answer).
void tally_below_atol(const TrialFacts& trial, const compare::TensorFile& outputs,
                      const ZeroCounts& within_tolerance_of_zero,
                      const compare::ToleranceOverride& tolerance,
                      std::map<std::string, BelowAtol>& tally) {
  for (const auto& [name, reference] : outputs.tensors) {
    auto& t = tally[name];
    if (!compare::dtype_is_floating(reference.dtype) || !t.every_trial) {
      t.every_trial = false;
      continue;
    }
    const Tolerance tol = compare::tolerance_for(reference.dtype, tolerance);
    const std::size_t zeros = compare::count_matching(reference, 0, Tolerance{});
    const std::size_t nonzero = reference.numel() - zeros;
    const std::size_t below = within_tolerance_of_zero.at(name) - zeros;
    const double share = nonzero ? static_cast<double>(below) / static_cast<double>(nonzero) : 0;
    if (share < kMostlyBelowAtolShare) {
      t.every_trial = false;
    } else if (share < t.share) {
      t = {share, below, nonzero, reference.numel(), trial.index, tol, true};
    }
  }
}

void judge_below_atol(const std::map<std::string, BelowAtol>& tally,
                      std::vector<Finding>& findings) {
  for (const auto& [name, t] : tally) {
    // Every element on every trial: zeros pass, which trivial-answer reports as an error.
    if (!t.every_trial || t.below == t.nonzero) {
      continue;
    }
    findings.push_back(
        {"mostly-below-atol", "warn",
         fmt::format("{}: on every trial at least {:.2f} % of the elements that are not exactly 0 "
                     "lie within the tolerance of 0 (trial {}: {} of {}; atol {:g}, rtol {:g}), "
                     "so the tolerance grades almost nothing of them: all zeros miss only {} of "
                     "its {} elements, and a kernel that gets only the largest values right passes",
                     name, t.share * 100, t.trial, t.below, t.nonzero, t.tolerance.atol,
                     t.tolerance.rtol, t.nonzero - t.below, t.numel)});
  }
}

} // namespace

bool near_constant(const Tensor& tensor, const Tolerance& tolerance) {
  const std::size_t n = tensor.numel();
  if (n < 2) {
    return false;
  }
  // Each block's extremes, then the blocks' (element_blocks.hpp). A NaN is nobody's minimum or
  // maximum unless it comes first, as std::min and std::max have it element by element.
  using Extremes = std::pair<double, double>;
  const auto blocks =
      compare::over_element_blocks<Extremes>(n, [&](std::size_t begin, std::size_t size) {
        Extremes e{tensor.value(begin), tensor.value(begin)};
        compare::decode_chunks(tensor, begin, size, [&](const double* values, std::size_t count) {
          for (std::size_t j = 0; j < count; ++j) {
            e.first = std::min(e.first, values[j]);
            e.second = std::max(e.second, values[j]);
          }
          return true;
        });
        return e;
      });
  double lo = blocks.front()->first, hi = blocks.front()->second;
  for (const auto& block : blocks) {
    lo = std::min(lo, block->first);
    hi = std::max(hi, block->second);
  }
  return within(lo, hi, tolerance) && within(hi, lo, tolerance);
}

std::vector<int> uniform_axes(const Tensor& tensor, const Tolerance& tolerance) {
  std::vector<int> axes;
  const auto& shape = tensor.shape;
  if (shape.size() < 2 || tensor.numel() == 0) {
    return axes;
  }
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] < 2) {
      continue;
    }
    // Element i has coordinate c along `axis`; its twin at coordinate 0 sits c*stride before it.
    std::size_t stride = 1;
    for (std::size_t d = axis + 1; d < shape.size(); ++d) {
      stride *= static_cast<std::size_t>(shape[d]);
    }
    const std::size_t extent = static_cast<std::size_t>(shape[axis]);
    bool uniform = true;
    for (std::size_t i = 0; i < tensor.numel() && uniform; ++i) {
      const std::size_t coordinate = (i / stride) % extent;
      if (coordinate != 0) {
        uniform = within(tensor.value(i), tensor.value(i - coordinate * stride), tolerance);
      }
    }
    if (uniform) {
      axes.push_back(static_cast<int>(axis));
    }
  }
  return axes;
}

struct ProblemJudge::State {
  explicit State(compare::ToleranceOverride t) : tolerance(t), search(t) {}

  compare::ToleranceOverride tolerance;
  compare::TrivialAnswerSearch search;
  std::vector<TrialFacts> ran;
  std::vector<Finding> raised;         // reference-runs, in trial order
  std::vector<Finding> first_findings; // the first trial's outputs' shape
  std::vector<int> weights_differ;
  std::map<std::string, TrivialTally> trivial;
  std::map<std::string, BelowAtol> below_atol;
  std::optional<TensorFile> first_outputs;
  int same_as_first = 0;
  int nondeterministic = 0;
  int seeded_only = 0; // deterministic only because each call was seeded
  std::string first_disagreement;

  void judge_shape(const TensorFile& outputs, int index) {
    for (const auto& [name, tensor] : outputs.tensors) {
      const Tolerance tol = compare::tolerance_for(tensor.dtype, tolerance);
      if (near_constant(tensor, tol)) {
        first_findings.push_back({"not-near-constant", "warn",
                                  fmt::format("{} of trial {} is near-constant: all {} values lie "
                                              "within the tolerance of each other",
                                              name, index, tensor.numel())});
      } else {
        for (int axis : uniform_axes(tensor, tol)) {
          first_findings.push_back({"not-uniform-along-axis", "warn",
                                    fmt::format("{} of trial {} is uniform along axis {} (every "
                                                "slice equals the first within tolerance)",
                                                name, index, axis)});
        }
      }
    }
  }

  bool same_as(const TensorFile& outputs, const TensorFile& first) const {
    bool same = first.tensors.size() == outputs.tensors.size();
    for (const auto& [name, tensor] : outputs.tensors) {
      const auto it = first.tensors.find(name);
      same = same && it != first.tensors.end() &&
             compare::all_within_tolerance(tensor, it->second,
                                           compare::tolerance_for(tensor.dtype, tolerance));
    }
    return same;
  }
};

ProblemJudge::ProblemJudge(compare::ToleranceOverride tolerance)
    : m_state(std::make_unique<State>(tolerance)) {}

ProblemJudge::~ProblemJudge() = default;

void ProblemJudge::add_trial(const TrialFacts& trial) {
  State& s = *m_state;
  if (!trial.ran) {
    s.raised.push_back(
        {"reference-runs", "error",
         fmt::format("the reference raised on {}: {}", trial_label(trial), trial.error)});
    return;
  }
  s.ran.push_back(trial);
  if (trial.weights_follow_seed == false) {
    s.weights_differ.push_back(trial.index);
  }
  TensorFile outputs = compare::read_safetensors(trial.outputs);
  bool repeat_passed = trial.repeat_identical;
  if (!repeat_passed) {
    const auto repeat = compare::compare_output_files(trial.repeat, trial.outputs, s.tolerance);
    repeat_passed = repeat.passed;
    if (!repeat.passed && s.nondeterministic++ == 0) {
      s.first_disagreement = fmt::format("trial {}: {}", trial.index, repeat.failure);
    }
  }
  if (repeat_passed && !trial.unseeded_identical && !trial.unseeded.empty() &&
      std::filesystem::exists(trial.unseeded) &&
      !compare::compare_output_files(trial.unseeded, trial.outputs, s.tolerance).passed) {
    ++s.seeded_only;
  }
  const ZeroCounts zeros = count_zeros(outputs, s.tolerance);
  judge_trivial(trial, outputs, zeros, s.tolerance, s.trivial);
  tally_below_atol(trial, outputs, zeros, s.tolerance, s.below_atol);
  s.search.add(outputs);
  if (!s.first_outputs) {
    s.judge_shape(outputs, trial.index);
    s.first_outputs = std::move(outputs);
  } else {
    s.same_as_first += s.same_as(outputs, *s.first_outputs) ? 1 : 0;
  }
}

bool ProblemJudge::outputs_needed_again() const {
  return !m_state->search.settled();
}

std::vector<Finding> ProblemJudge::findings(const ProblemFacts& facts) {
  State& s = *m_state;
  std::vector<Finding> findings = s.raised;
  if (!s.weights_differ.empty()) {
    findings.push_back(
        {"weights-follow-seed", "error",
         fmt::format("on {} trial(s) (first: trial {}), two models built under the same seed "
                     "have different weights: a candidate cannot reproduce them",
                     s.weights_differ.size(), s.weights_differ.front())});
  }
  if (s.ran.empty()) {
    return findings;
  }
  findings.insert(findings.end(), s.first_findings.begin(), s.first_findings.end());
  const std::size_t ran = s.ran.size();
  if (s.nondeterministic > 0) {
    findings.push_back({"deterministic", "error",
                        fmt::format("two calls on the same inputs disagree on {} of {} trials "
                                    "(second call against first, each under the trial's forward "
                                    "seed); {}",
                                    s.nondeterministic, ran, s.first_disagreement)});
  }
  if (s.seeded_only > 0) {
    findings.push_back(
        {"seeded-forward", "info",
         fmt::format("forward draws random numbers: on {} of {} trials two calls agree only when "
                     "torch's generators are seeded again before each. kbench seeds them before "
                     "every forward, the reference's and the candidate's alike (PopcornBench's "
                     "rule: the trial's seed + 1, mod 2^32; docs/problems.md), so a candidate "
                     "passes only by drawing the same numbers from torch in the same order",
                     s.seeded_only, ran)});
  }
  if (ran > 1 && s.same_as_first == static_cast<int>(ran) - 1) {
    findings.push_back({"depends-on-inputs", "error",
                        fmt::format("all {} trials give the same outputs although their seeds "
                                    "differ: the output does not depend on the inputs",
                                    ran)});
  }
  for (const auto& [what, tally] : s.trivial) {
    if (tally.passed == tally.tried && tally.tried > 0) {
      findings.push_back({"trivial-answer", "error",
                          fmt::format("{} passes the tolerance on every trial: a kernel that "
                                      "computes nothing would be graded correct",
                                      what)});
    } else if (tally.passed > 0) {
      findings.push_back({"trivial-answer", "warn",
                          fmt::format("{} passes the tolerance on {} of {} trials", what,
                                      tally.passed, tally.tried)});
    }
  }
  report_constants(s.search.finish([&](std::size_t i) {
    return compare::read_safetensors(s.ran.at(i).outputs);
  }),
                   findings);
  judge_below_atol(s.below_atol, findings);
  if (facts.call_us) {
    if (facts.on_gpu && *facts.call_us < kLaunchBoundUs) {
      findings.push_back({"not-launch-bound", "warn",
                          fmt::format("the reference takes {:.1f} µs per call (under {:.0f} µs): "
                                      "launch overhead, not the kernel, sets its time",
                                      *facts.call_us, kLaunchBoundUs)});
    }
  }
  if (facts.peak_memory_bytes && facts.device_memory_bytes && *facts.device_memory_bytes > 0) {
    const double share = static_cast<double>(*facts.peak_memory_bytes) /
                         static_cast<double>(*facts.device_memory_bytes);
    if (share > 0.5) {
      findings.push_back(
          {"fits-device-memory", share > 0.9 ? "error" : "warn",
           fmt::format("one call needs {:.2f} GB, {:.0f} % of the device's {:.2f} GB",
                       *facts.peak_memory_bytes / 1e9, share * 100,
                       *facts.device_memory_bytes / 1e9)});
    }
  }
  return findings;
}

std::vector<Finding> judge_problem(const ProblemFacts& facts) {
  ProblemJudge judge(facts.tolerance);
  for (const auto& trial : facts.trials) {
    judge.add_trial(trial);
  }
  return judge.findings(facts);
}

} // namespace kbench::checks
