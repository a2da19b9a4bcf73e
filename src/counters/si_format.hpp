#pragma once
// Three significant digits with an SI prefix: "4.80 TB/s", "66.9 TFLOP/s". The roofline chart
// and the summary's counter lines write FLOP/s and bytes, which span too many decades for one
// fixed unit. `trim_zeros` (axis ticks) makes a decade read "1 GFLOP/s", not "1.00 GFLOP/s".
#include <string>
#include <string_view>

namespace kbench::counters {

std::string format_si(double value, std::string_view unit, bool trim_zeros = false);

} // namespace kbench::counters
