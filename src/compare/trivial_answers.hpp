#pragma once
// Would an answer that computes nothing pass? Zeros, one constant, or each trial's own mean,
// judged over the reference's outputs of every trial under the comparator's own rule
// (within_tolerance, tolerance_for): a problem whose outputs such an answer matches cannot tell
// a kernel that does the work from one that does not (KernelBench issue #165).
#include "compare/compare_outputs.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kbench::compare {

enum class TrivialKind {
  zeros,    // every element 0
  constant, // one value, the same in every trial (a kernel could hard-code it)
  mean,     // each trial's own mean of the output, everywhere (the output is flat per trial)
};

const char* trivial_kind_name(TrivialKind kind); // "zeros", "constant", "mean"

// An answer for one output that passes on every trial. Only the simplest is reported: zeros
// before a constant before the mean.
struct TrivialAnswer {
  std::string output; // "output.0", or whatever key the trials' files use ("rank1/output.0")
  TrivialKind kind = TrivialKind::zeros;
  double value = 0;   // the constant (zeros: 0; mean: the first trial's mean)
  double max_abs = 0; // the largest finite |reference| of the output over the trials
  Tolerance tolerance;
  std::size_t trials = 0;
};

// The constants c for which within_tolerance(c, r) holds for every element r admitted so far:
// a closed range of finite values when every r is finite, a single non-finite value when every
// r is that value, or nothing.
class ConstantSet {
public:
  static ConstantSet none() {
    ConstantSet set;
    set.m_kind = Kind::nothing;
    return set;
  }
  void admit(double r, const Tolerance& tolerance);
  void intersect(const ConstantSet& other);
  bool empty() const { return m_kind == Kind::nothing; }
  // A value of `dtype` that should lie in the set: the midpoint of the range rounded to the
  // dtype. When any value of the dtype lies in the range, the one nearest the midpoint does, so
  // this is the one to verify; nullopt when the set is empty or admitted nothing.
  std::optional<double> pick(DType dtype) const;

private:
  enum class Kind { everything, range, one_value, nothing };
  Kind m_kind = Kind::everything;
  double m_lo = 0, m_hi = 0; // range
  double m_value = 0;        // one_value: NaN, +inf or -inf
};

// `value` rounded to the nearest value `dtype` holds (ties to even; past the largest finite
// float16 or bfloat16 value, infinity; integers clamped to their range, bool 0 or 1).
double round_to_dtype(double value, DType dtype);

// The reference outputs of trial `i` (0 <= i < trial_count), keyed by output. Called once per
// trial, and a second time per trial only when some answer is left to verify.
using TrialOutputs = std::function<TensorFile(std::size_t trial)>;

// find_trivial_answers one trial at a time, for a caller that cannot keep every trial's outputs
// (`kbench problems check` on outputs of several GiB): add() scans a trial in the first pass;
// once settled() (nothing can pass any output), no trial's outputs are needed again, else
// finish() reads them again through `load` to verify what is left.
class TrivialAnswerSearch {
public:
  explicit TrivialAnswerSearch(ToleranceOverride tolerance) : m_tolerance(tolerance) {}
  void add(const TensorFile& outputs);
  bool settled() const;
  std::vector<TrivialAnswer> finish(const TrialOutputs& load);

  // What the first pass knows of one output.
  struct OutputState {
    DType dtype = DType::F32;
    Tolerance tolerance;
    bool zeros = true, constant = true, mean = true;
    ConstantSet constants;     // over every trial
    std::vector<double> means; // per trial, rounded to the dtype
    double max_abs = 0;
    std::optional<double> picked; // the constant to verify

    bool dead() const { return !zeros && !constant && !mean; }
    bool to_verify() const { return !zeros && (constant || mean); }
  };

private:
  ToleranceOverride m_tolerance;
  std::size_t m_trials = 0;
  std::map<std::string, OutputState> m_states;
};

// The outputs for which a trivial answer passes on every trial (empty outputs and outputs
// missing from a trial are never reported; the mean is not tried on one-element outputs, where
// it is the answer itself). A candidate is found in one pass that stops reading an output once
// nothing can pass it (for an honest problem, within its first elements); constants and means
// are then verified element by element with within_tolerance, so a reported answer does pass.
std::vector<TrivialAnswer> find_trivial_answers(std::size_t trial_count, const TrialOutputs& load,
                                                const ToleranceOverride& tolerance);

// "zeros pass the tolerance for output.0 on all 3 trials (largest |reference| 4.1e-09, atol
// 0.0001, rtol 0.0001)"; for a constant, the constant; for the mean, the first trial's.
std::string describe_trivial_answer(const TrivialAnswer& answer);

// How many elements of `reference` the constant `value` matches under `tolerance`.
std::size_t count_matching(const Tensor& reference, double value, const Tolerance& tolerance);
// count_matching(...) == numel, stopping at the first element `value` does not match.
bool all_matching(const Tensor& reference, double value, const Tolerance& tolerance);

} // namespace kbench::compare
