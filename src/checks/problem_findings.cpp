#include "checks/problem_findings.hpp"

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

void judge_trivial(const TrialFacts& trial, const TensorFile& outputs, const ProblemFacts& facts,
                   std::map<std::string, TrivialTally>& tally) {
  const auto trivial = read(trial.trivial);
  const auto inputs = read(trial.inputs);
  for (const auto& [name, reference] : outputs.tensors) {
    const Tolerance tol = compare::tolerance_for(reference.dtype, facts.tolerance);
    const std::string index = name.substr(name.find('.') + 1);
    auto attempt = [&](const std::string& kind, const Tensor& answer) {
      auto& t = tally[kind + " for " + name];
      ++t.tried;
      if (compare::compare_tensors(answer, reference, tol).passed) {
        ++t.passed;
      }
    };
    if (trivial) {
      // A one-element output's "constant" (its own mean) is the answer itself, not a shortcut;
      // whether it depends on the inputs is depends-on-inputs' question.
      for (const char* kind : {"zeros", "constant"}) {
        if (reference.numel() < 2 && std::string(kind) == "constant") {
          continue;
        }
        if (const auto it = trivial->tensors.find(std::string(kind) + "." + index);
            it != trivial->tensors.end()) {
          attempt(kind, it->second);
        }
      }
    }
    if (inputs) {
      for (const auto& [input_name, input] : inputs->tensors) {
        if (input.dtype == reference.dtype && input.shape == reference.shape) {
          attempt("input " + input_name + " passed through", input);
        }
      }
    }
  }
}

// One constant for every trial, found exactly (compare::find_trivial_answers). Zeros and each
// trial's mean are the worker's trivial files' job (judge_trivial), which also counts the
// trials they pass on; a constant is new only where zeros fail.
void judge_constant(const std::vector<const TrialFacts*>& ran, const ProblemFacts& facts,
                    std::vector<Finding>& findings) {
  const auto answers = compare::find_trivial_answers(
      ran.size(), [&](std::size_t i) { return compare::read_safetensors(ran[i]->outputs); },
      facts.tolerance);
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
                      const ProblemFacts& facts, std::map<std::string, BelowAtol>& tally) {
  for (const auto& [name, reference] : outputs.tensors) {
    auto& t = tally[name];
    if (!compare::dtype_is_floating(reference.dtype) || !t.every_trial) {
      t.every_trial = false;
      continue;
    }
    const Tolerance tol = compare::tolerance_for(reference.dtype, facts.tolerance);
    const std::size_t zeros = compare::count_matching(reference, 0, Tolerance{});
    const std::size_t nonzero = reference.numel() - zeros;
    const std::size_t below = compare::count_matching(reference, 0, tol) - zeros;
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
  double lo = tensor.value(0), hi = lo;
  for (std::size_t i = 1; i < n; ++i) {
    const double v = tensor.value(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
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

std::vector<Finding> judge_problem(const ProblemFacts& facts) {
  std::vector<Finding> findings;
  std::vector<const TrialFacts*> ran;
  std::vector<int> weights_differ;
  for (const auto& trial : facts.trials) {
    if (!trial.ran) {
      findings.push_back(
          {"reference-runs", "error",
           fmt::format("the reference raised on {}: {}", trial_label(trial), trial.error)});
      continue;
    }
    ran.push_back(&trial);
    if (trial.weights_follow_seed == false) {
      weights_differ.push_back(trial.index);
    }
  }
  if (!weights_differ.empty()) {
    findings.push_back(
        {"weights-follow-seed", "error",
         fmt::format("on {} trial(s) (first: trial {}), two models built under the same seed "
                     "have different weights: a candidate cannot reproduce them",
                     weights_differ.size(), weights_differ.front())});
  }
  if (ran.empty()) {
    return findings;
  }

  std::map<std::string, TrivialTally> trivial;
  std::map<std::string, BelowAtol> below_atol;
  std::optional<TensorFile> first_outputs;
  int same_as_first = 0;
  int nondeterministic = 0;
  int seeded_only = 0; // deterministic only because each call was seeded
  std::string first_disagreement;
  for (const TrialFacts* trial : ran) {
    const TensorFile outputs = compare::read_safetensors(trial->outputs);
    const auto repeat =
        compare::compare_output_files(trial->repeat, trial->outputs, facts.tolerance);
    if (!repeat.passed && nondeterministic++ == 0) {
      first_disagreement = fmt::format("trial {}: {}", trial->index, repeat.failure);
    }
    if (repeat.passed && !trial->unseeded.empty() && std::filesystem::exists(trial->unseeded) &&
        !compare::compare_output_files(trial->unseeded, trial->outputs, facts.tolerance).passed) {
      ++seeded_only;
    }
    judge_trivial(*trial, outputs, facts, trivial);
    tally_below_atol(*trial, outputs, facts, below_atol);
    if (!first_outputs) {
      first_outputs = outputs;
      for (const auto& [name, tensor] : outputs.tensors) {
        const Tolerance tol = compare::tolerance_for(tensor.dtype, facts.tolerance);
        if (near_constant(tensor, tol)) {
          findings.push_back({"not-near-constant", "warn",
                              fmt::format("{} of trial {} is near-constant: all {} values lie "
                                          "within the tolerance of each other",
                                          name, trial->index, tensor.numel())});
        } else {
          for (int axis : uniform_axes(tensor, tol)) {
            findings.push_back({"not-uniform-along-axis", "warn",
                                fmt::format("{} of trial {} is uniform along axis {} (every "
                                            "slice equals the first within tolerance)",
                                            name, trial->index, axis)});
          }
        }
      }
    } else {
      bool same = first_outputs->tensors.size() == outputs.tensors.size();
      for (const auto& [name, tensor] : outputs.tensors) {
        const auto it = first_outputs->tensors.find(name);
        same = same && it != first_outputs->tensors.end() &&
               compare::compare_tensors(tensor, it->second,
                                        compare::tolerance_for(tensor.dtype, facts.tolerance))
                   .passed;
      }
      same_as_first += same ? 1 : 0;
    }
  }
  if (nondeterministic > 0) {
    findings.push_back({"deterministic", "error",
                        fmt::format("two calls on the same inputs disagree on {} of {} trials "
                                    "(second call against first, each under the trial's forward "
                                    "seed); {}",
                                    nondeterministic, ran.size(), first_disagreement)});
  }
  if (seeded_only > 0) {
    findings.push_back(
        {"seeded-forward", "info",
         fmt::format("forward draws random numbers: on {} of {} trials two calls agree only when "
                     "torch's generators are seeded again before each. kbench seeds them before "
                     "every forward, the reference's and the candidate's alike (PopcornBench's "
                     "rule: the trial's seed + 1, mod 2^32; docs/problems.md), so a candidate "
                     "passes only by drawing the same numbers from torch in the same order",
                     seeded_only, ran.size())});
  }
  if (ran.size() > 1 && same_as_first == static_cast<int>(ran.size()) - 1) {
    findings.push_back({"depends-on-inputs", "error",
                        fmt::format("all {} trials give the same outputs although their seeds "
                                    "differ: the output does not depend on the inputs",
                                    ran.size())});
  }
  for (const auto& [what, tally] : trivial) {
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
  judge_constant(ran, facts, findings);
  judge_below_atol(below_atol, findings);
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

} // namespace kbench::checks
