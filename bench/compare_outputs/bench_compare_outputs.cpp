// The cost of comparing a trial's outputs at the sizes of real problems (a 4096 x 8192 fp32
// ReLU; an 8192 x 8192 fp16 matmul), the engine's chunked decode against the element-by-element
// baseline it replaced, measured in the same run, and whether both give the same figures.
// Usage: build/bench_compare_outputs
#include "bench/compare_outputs/element_by_element.hpp"
#include "bench/compare_outputs/tensor_pairs.hpp"
#include "bench/seconds.hpp"

#include <fmt/format.h>

#include <tuple>

int main() {
  using kbench::compare::DType;
  fmt::print(
      "| outputs | elements | element-by-element baseline | engine | ratio | same figures |\n"
      "| --- | --- | --- | --- | --- | --- |\n");
  for (const auto& [dtype, numel, zero_share, label] :
       {std::tuple{DType::F32, std::size_t{4096} * 8192, 0.0, "fp32 4096 x 8192"},
        {DType::F32, std::size_t{4096} * 8192, 0.5, "fp32 4096 x 8192, half zeros (a ReLU's)"},
        {DType::F16, std::size_t{8192} * 8192, 0.0, "fp16 8192 x 8192"},
        {DType::BF16, std::size_t{8192} * 8192, 0.0, "bf16 8192 x 8192"}}) {
    const auto [candidate, reference] =
        kbench::bench::random_tensor_pair(dtype, numel, 7, zero_share);
    const auto tolerance = kbench::compare::default_tolerance(dtype);
    kbench::bench::ElementwiseFigures baseline;
    kbench::TensorComparison engine;
    const double t_baseline = kbench::bench::seconds([&] {
      baseline = kbench::bench::compare_element_by_element(candidate, reference, tolerance);
    });
    const double t_engine = kbench::bench::seconds(
        [&] { engine = kbench::compare::compare_tensors(candidate, reference, tolerance); });
    const bool same =
        baseline.mismatches == engine.mismatches && baseline.max_abs_err == engine.max_abs_err &&
        baseline.mean_abs_err == engine.mean_abs_err &&
        baseline.max_rel_err == engine.max_rel_err && baseline.mean_rel_err == engine.mean_rel_err;
    fmt::print("| {} | {} | {:.3f} s | {:.3f} s | {:.1f}x faster | {} |\n", label, numel,
               t_baseline, t_engine, t_baseline / t_engine, same ? "yes" : "NO");
  }
}
