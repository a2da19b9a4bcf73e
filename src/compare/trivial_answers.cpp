#include "compare/trivial_answers.hpp"

#include "compare/element_blocks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>

namespace kbench::compare {

namespace {

// IEEE binary formats narrower than double: `mantissa` stored bits, `min_exponent` the exponent of
// the smallest normal value (below it the spacing stays that of the subnormals), `max_finite`.
double round_binary(double x, int mantissa, int min_exponent, double max_finite) {
  if (!std::isfinite(x) || x == 0) {
    return x;
  }
  int exponent = 0;
  std::frexp(x, &exponent); // |x| = f * 2^exponent, f in [0.5, 1)
  const double quantum = std::ldexp(1.0, std::max(exponent - 1, min_exponent) - mantissa);
  const double rounded = std::nearbyint(x / quantum) * quantum; // x / quantum is exact
  return std::fabs(rounded) > max_finite ? std::copysign(HUGE_VAL, x) : rounded;
}

double round_integer(double x, double lo, double hi) {
  return std::isnan(x) ? 0 : std::clamp(std::nearbyint(x), lo, hi);
}

template <typename T>
double round_to(double x) {
  return round_integer(x, static_cast<double>(std::numeric_limits<T>::min()),
                       static_cast<double>(std::numeric_limits<T>::max()));
}

// What is known about one output across the trials scanned so far.
using OutputState = TrivialAnswerSearch::OutputState;

// First pass over one trial's output: does zeros still pass, which constants pass in this
// trial, its mean. A block of elements per thread (element_blocks.hpp), combined in block order;
// a block stops once the element just read leaves nothing that could pass, and so do the blocks
// not yet started.
void scan(const Tensor& reference, OutputState& state) {
  const double atol = state.tolerance.atol, rtol = state.tolerance.rtol;
  const std::size_t n = reference.numel();
  const bool want_constants = state.constant || (state.mean && n >= 2);
  struct Scanned {
    bool zeros = true;
    ConstantSet constants;
    double sum = 0, max_abs = 0;
    bool dead() const { return !zeros && constants.empty(); }
  };
  const auto blocks = over_element_blocks<Scanned>(
      n,
      [&](std::size_t begin, std::size_t size) {
        Scanned block;
        block.zeros = state.zeros;
        decode_chunks(reference, begin, size, [&](const double* values, std::size_t count) {
          for (std::size_t j = 0; j < count; ++j) {
            const double r = values[j];
            block.zeros = block.zeros && within_tolerance(0, r, atol, rtol);
            if (want_constants) {
              block.constants.admit(r, state.tolerance);
            }
            if (std::isfinite(r)) {
              block.max_abs = std::max(block.max_abs, std::fabs(r));
            }
            block.sum += r;
          }
          // The figures are partial from here on; they are only read for an answer still alive.
          if (!block.zeros && (!want_constants || block.constants.empty())) {
            block.constants = ConstantSet::none();
            return false;
          }
          return true;
        });
        return block;
      },
      [](const Scanned& block) { return block.dead(); });
  ConstantSet trial;
  bool zeros = state.zeros;
  double sum = 0, max_abs = state.max_abs;
  for (const auto& block : blocks) {
    if (!block) { // left out: some block ended the pass, and with it every answer
      zeros = false;
      trial = ConstantSet::none();
      continue;
    }
    zeros = zeros && block->zeros;
    trial.intersect(block->constants);
    max_abs = std::max(max_abs, block->max_abs);
    sum += block->sum;
  }
  state.zeros = zeros;
  state.max_abs = max_abs;
  if (state.constant) {
    state.constants.intersect(trial);
    state.constant = !state.constants.empty();
  }
  if (state.mean) {
    state.mean = n >= 2 && !trial.empty();
    if (state.mean) {
      state.means.push_back(round_to_dtype(sum / static_cast<double>(n), state.dtype));
    }
  }
}

// Second pass: does each remaining answer match every element of this trial? A block per
// thread, as scan.
void verify(const Tensor& reference, std::size_t trial, OutputState& state) {
  const double atol = state.tolerance.atol, rtol = state.tolerance.rtol;
  const double constant = state.picked.value_or(0);
  const double mean = state.mean ? state.means[trial] : 0;
  using Verified = std::pair<bool, bool>; // constant, mean
  const auto blocks = over_element_blocks<Verified>(
      reference.numel(),
      [&](std::size_t begin, std::size_t size) {
        bool constant_ok = state.constant, mean_ok = state.mean;
        decode_chunks(reference, begin, size, [&](const double* values, std::size_t count) {
          for (std::size_t j = 0; j < count; ++j) {
            constant_ok = constant_ok && within_tolerance(constant, values[j], atol, rtol);
            mean_ok = mean_ok && within_tolerance(mean, values[j], atol, rtol);
          }
          return constant_ok || mean_ok;
        });
        return Verified{constant_ok, mean_ok};
      },
      [](const Verified& v) { return !v.first && !v.second; });
  for (const auto& block : blocks) {
    state.constant = state.constant && block && block->first;
    state.mean = state.mean && block && block->second;
  }
}

} // namespace

const char* trivial_kind_name(TrivialKind kind) {
  switch (kind) {
  case TrivialKind::zeros:
    return "zeros";
  case TrivialKind::constant:
    return "constant";
  case TrivialKind::mean:
    return "mean";
  }
  return "?";
}

void ConstantSet::admit(double r, const Tolerance& tolerance) {
  if (m_kind == Kind::nothing) {
    return;
  }
  if (!std::isfinite(r)) {
    const bool same =
        m_kind == Kind::one_value && ((std::isnan(r) && std::isnan(m_value)) || r == m_value);
    if (m_kind == Kind::everything) {
      m_kind = Kind::one_value;
      m_value = r;
    } else if (!same) {
      m_kind = Kind::nothing;
    }
    return;
  }
  const double slack = tolerance.atol + tolerance.rtol * std::fabs(r);
  ConstantSet element;
  element.m_kind = Kind::range;
  element.m_lo = r - slack;
  element.m_hi = r + slack;
  intersect(element);
}

void ConstantSet::intersect(const ConstantSet& other) {
  if (other.m_kind == Kind::everything || m_kind == Kind::nothing) {
    return;
  }
  if (m_kind == Kind::everything) {
    *this = other;
    return;
  }
  if (m_kind == Kind::range && other.m_kind == Kind::range) {
    m_lo = std::max(m_lo, other.m_lo);
    m_hi = std::min(m_hi, other.m_hi);
    if (m_lo > m_hi) {
      m_kind = Kind::nothing;
    }
    return;
  }
  const bool same_value =
      m_kind == Kind::one_value && other.m_kind == Kind::one_value &&
      ((std::isnan(m_value) && std::isnan(other.m_value)) || m_value == other.m_value);
  if (!same_value) {
    m_kind = Kind::nothing;
  }
}

std::optional<double> ConstantSet::pick(DType dtype) const {
  switch (m_kind) {
  case Kind::range:
    return round_to_dtype(m_lo / 2 + m_hi / 2, dtype);
  case Kind::one_value:
    if (dtype_is_floating(dtype)) {
      return m_value;
    }
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

double round_to_dtype(double value, DType dtype) {
  switch (dtype) {
  case DType::F64:
    return value;
  case DType::F32:
    return round_binary(value, 23, -126, FLT_MAX);
  case DType::F16:
    return round_binary(value, 10, -14, 65504.0);
  case DType::BF16:
    return round_binary(value, 7, -126, std::ldexp(255.0, 120)); // (2 - 2^-7) * 2^127
  case DType::I64:
    return round_to<std::int64_t>(value);
  case DType::I32:
    return round_to<std::int32_t>(value);
  case DType::I16:
    return round_to<std::int16_t>(value);
  case DType::I8:
    return round_to<std::int8_t>(value);
  case DType::U8:
    return round_to<std::uint8_t>(value);
  case DType::BOOL:
    return round_integer(value, 0, 1);
  }
  return value;
}

void TrivialAnswerSearch::add(const TensorFile& outputs) {
  const bool first = m_trials++ == 0;
  if (!first && settled()) {
    return;
  }
  if (first) {
    for (const auto& [name, reference] : outputs.tensors) {
      OutputState state;
      state.dtype = reference.dtype;
      state.tolerance = tolerance_for(reference.dtype, m_tolerance);
      m_states.emplace(name, std::move(state));
    }
  }
  for (auto& [name, state] : m_states) {
    const auto found = outputs.tensors.find(name);
    if (found == outputs.tensors.end() || found->second.numel() == 0 ||
        found->second.dtype != state.dtype) {
      state.zeros = state.constant = state.mean = false; // not an answer on every trial
    } else if (!state.dead()) {
      scan(found->second, state);
    }
  }
}

bool TrivialAnswerSearch::settled() const {
  return m_trials > 0 && std::all_of(m_states.begin(), m_states.end(),
                                     [](const auto& entry) { return entry.second.dead(); });
}

std::vector<TrivialAnswer> TrivialAnswerSearch::finish(const TrialOutputs& load) {
  if (settled()) {
    return {};
  }
  bool verifying = false;
  for (auto& [name, state] : m_states) {
    if (state.to_verify()) {
      state.picked = state.constant ? state.constants.pick(state.dtype) : std::nullopt;
      state.constant = state.picked.has_value();
      verifying = verifying || state.to_verify();
    }
  }
  for (std::size_t trial = 0; verifying && trial < m_trials; ++trial) {
    const TensorFile outputs = load(trial);
    verifying = false;
    for (auto& [name, state] : m_states) {
      if (state.to_verify()) {
        verify(outputs.tensors.at(name), trial, state);
        verifying = verifying || state.to_verify();
      }
    }
  }

  std::vector<TrivialAnswer> answers;
  for (const auto& [name, state] : m_states) {
    if (state.dead()) {
      continue;
    }
    TrivialAnswer answer;
    answer.output = name;
    answer.kind = state.zeros      ? TrivialKind::zeros
                  : state.constant ? TrivialKind::constant
                                   : TrivialKind::mean;
    answer.value = answer.kind == TrivialKind::constant ? *state.picked
                   : answer.kind == TrivialKind::mean   ? state.means.front()
                                                        : 0.0;
    answer.max_abs = state.max_abs;
    answer.tolerance = state.tolerance;
    answer.trials = m_trials;
    answers.push_back(std::move(answer));
  }
  return answers;
}

std::vector<TrivialAnswer> find_trivial_answers(std::size_t trial_count, const TrialOutputs& load,
                                                const ToleranceOverride& tolerance) {
  TrivialAnswerSearch search(tolerance);
  for (std::size_t trial = 0; trial < trial_count && !search.settled(); ++trial) {
    search.add(load(trial));
  }
  return search.finish(load);
}

std::string describe_trivial_answer(const TrivialAnswer& a) {
  const std::string where = fmt::format("the tolerance for {} on {}", a.output,
                                        a.trials == 1 ? std::string("its one trial")
                                                      : fmt::format("all {} trials", a.trials));
  const std::string tolerance =
      fmt::format("atol {:g}, rtol {:g}", a.tolerance.atol, a.tolerance.rtol);
  switch (a.kind) {
  case TrivialKind::zeros:
    return fmt::format("zeros pass {} (largest |reference| {:.2g}, {})", where, a.max_abs,
                       tolerance);
  case TrivialKind::constant:
    return fmt::format("the constant {:.6g} passes {} ({})", a.value, where, tolerance);
  case TrivialKind::mean:
    return fmt::format("each trial's own mean ({:.6g} on the first) passes {}: the output is flat "
                       "within a trial ({})",
                       a.value, where, tolerance);
  }
  return {};
}

namespace {

// The elements of `reference` that `value` matches, decoded a chunk at a time, a block of
// elements per thread (element_blocks.hpp); with kStop, a block's count ends with the first chunk
// that holds an element it does not match, and blocks not yet started are left out. The inner
// loop adds without branching: a ReLU's output, half zeros in no order, would mispredict a branch
// on every other element (it made the count three times slower).
template <bool kStop>
std::size_t matching_elements(const Tensor& reference, double value, const Tolerance& tolerance) {
  struct Counted {
    std::size_t matching = 0, read = 0;
  };
  const auto blocks = over_element_blocks<Counted>(
      reference.numel(),
      [&](std::size_t begin, std::size_t size) {
        Counted counted;
        decode_chunks(reference, begin, size, [&](const double* values, std::size_t count) {
          std::size_t chunk_matching = 0;
          for (std::size_t j = 0; j < count; ++j) {
            chunk_matching +=
                within_tolerance(value, values[j], tolerance.atol, tolerance.rtol) ? 1 : 0;
          }
          counted.matching += chunk_matching;
          counted.read += count;
          return !kStop || chunk_matching == count;
        });
        return counted;
      },
      [](const Counted& counted) { return kStop && counted.matching < counted.read; });
  std::size_t matching = 0;
  for (const auto& block : blocks) {
    matching += block ? block->matching : 0;
  }
  return matching;
}

} // namespace

std::size_t count_matching(const Tensor& reference, double value, const Tolerance& tolerance) {
  return matching_elements<false>(reference, value, tolerance);
}

bool all_matching(const Tensor& reference, double value, const Tolerance& tolerance) {
  return matching_elements<true>(reference, value, tolerance) == reference.numel();
}

} // namespace kbench::compare
