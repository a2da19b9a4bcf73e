#pragma once
// The output comparison as it was first written: every element decoded on its own (a dtype
// switch and, for fp16, a bit-field decode per element), then checked. The engine now decodes
// a chunk at a time (Tensor::decode, src/compare/tolerance.cpp); this is the baseline of
// bench/compare_outputs and the oracle of the unit test that the two agree to the bit.
#include "compare/tolerance.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace kbench::bench {

struct ElementwiseFigures {
  std::size_t mismatches = 0;
  double max_abs_err = 0, mean_abs_err = 0, max_rel_err = 0, mean_rel_err = 0;
  std::vector<std::size_t> first_mismatches; // flat indices
};

inline double element_value(const compare::Tensor& tensor, std::size_t i) {
  const std::byte* p = tensor.data.data() + i * compare::dtype_size(tensor.dtype);
  const auto load = [p](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  switch (tensor.dtype) {
  case compare::DType::F64:
    return load(double{});
  case compare::DType::F32:
    return load(float{});
  case compare::DType::F16: {
    const std::uint16_t bits = load(std::uint16_t{});
    const int exponent = (bits >> 10) & 0x1F;
    const int mantissa = bits & 0x3FF;
    const double magnitude = exponent == 0      ? std::ldexp(mantissa, -24)
                             : exponent == 0x1F ? (mantissa == 0 ? INFINITY : NAN)
                                                : std::ldexp(mantissa | 0x400, exponent - 25);
    return std::copysign(magnitude, (bits & 0x8000) ? -1.0 : 1.0);
  }
  case compare::DType::BF16:
    return std::bit_cast<float>(static_cast<std::uint32_t>(load(std::uint16_t{})) << 16);
  case compare::DType::I64:
    return static_cast<double>(load(std::int64_t{}));
  case compare::DType::I32:
    return load(std::int32_t{});
  case compare::DType::I16:
    return load(std::int16_t{});
  case compare::DType::I8:
    return load(std::int8_t{});
  case compare::DType::U8:
    return load(std::uint8_t{});
  case compare::DType::BOOL:
    return load(std::uint8_t{}) != 0 ? 1.0 : 0.0;
  }
  return NAN;
}

inline ElementwiseFigures compare_element_by_element(const compare::Tensor& candidate,
                                                     const compare::Tensor& reference,
                                                     const Tolerance& tolerance,
                                                     std::size_t max_reported = 5) {
  ElementwiseFigures out;
  double abs_sum = 0, rel_sum = 0;
  std::size_t abs_count = 0, rel_count = 0;
  for (std::size_t i = 0; i < reference.numel(); ++i) {
    const double c = element_value(candidate, i);
    const double r = element_value(reference, i);
    bool ok;
    if (std::isfinite(c) && std::isfinite(r)) {
      const double abs_err = std::fabs(c - r);
      ok = abs_err <= tolerance.atol + tolerance.rtol * std::fabs(r);
      abs_sum += abs_err;
      ++abs_count;
      out.max_abs_err = std::max(out.max_abs_err, abs_err);
      if (r != 0) {
        const double rel_err = abs_err / std::fabs(r);
        rel_sum += rel_err;
        ++rel_count;
        out.max_rel_err = std::max(out.max_rel_err, rel_err);
      }
    } else {
      ok = (std::isnan(c) && std::isnan(r)) || (!std::isnan(c) && c == r);
    }
    if (!ok && out.first_mismatches.size() < max_reported) {
      out.first_mismatches.push_back(i);
    }
    out.mismatches += ok ? 0 : 1;
  }
  out.mean_abs_err = abs_count ? abs_sum / static_cast<double>(abs_count) : 0;
  out.mean_rel_err = rel_count ? rel_sum / static_cast<double>(rel_count) : 0;
  return out;
}

} // namespace kbench::bench
