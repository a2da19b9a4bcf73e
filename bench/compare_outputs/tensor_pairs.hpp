#pragma once
// Reference/candidate tensor pairs for bench/compare_outputs and its unit test: the reference's
// bytes are random bit patterns (so floats include NaN, infinities, subnormals and zeros), and
// the candidate is the reference with about one element in 16 replaced by other random bits.
// `zero_share` of the reference's elements (chosen at random) are zero bytes, as in a ReLU's
// output, where the relative error is undefined.
#include "compare/safetensors.hpp"

#include <algorithm>
#include <random>
#include <utility>

namespace kbench::bench {

inline std::pair<compare::Tensor, compare::Tensor> random_tensor_pair(compare::DType dtype,
                                                                      std::size_t numel,
                                                                      std::uint64_t seed,
                                                                      double zero_share = 0) {
  std::mt19937_64 rng(seed);
  compare::Tensor reference;
  reference.dtype = dtype;
  reference.shape = {static_cast<std::int64_t>(numel)};
  const std::size_t size = compare::dtype_size(dtype);
  reference.data.resize(numel * size);
  for (auto& byte : reference.data) {
    byte = static_cast<std::byte>(rng());
  }
  std::bernoulli_distribution zero(zero_share);
  for (std::size_t i = 0; i < numel; ++i) {
    if (zero(rng)) {
      std::fill_n(reference.data.begin() + static_cast<std::ptrdiff_t>(i * size), size,
                  std::byte{0});
    }
  }
  if (dtype == compare::DType::BOOL) { // safetensors' bool is one byte holding 0 or 1
    for (auto& byte : reference.data) {
      byte &= std::byte{1};
    }
  }
  compare::Tensor candidate = reference;
  for (std::size_t i = 0; i < numel; ++i) {
    if (rng() % 16 == 0) {
      for (std::size_t b = 0; b < size; ++b) {
        candidate.data[i * size + b] = dtype == compare::DType::BOOL
                                           ? static_cast<std::byte>(rng() & 1)
                                           : static_cast<std::byte>(rng());
      }
    }
  }
  return {std::move(candidate), std::move(reference)};
}

} // namespace kbench::bench
