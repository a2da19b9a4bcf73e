#pragma once
// The pages' charts, as inline SVG (no script, no external file): the timing distributions of
// the reference and the candidate (box plots from each side's percentiles), bars (warp stalls),
// a line of the runtime measured turn by turn, and the roofline (counters/roofline_svg.hpp,
// from a result's counters). Labels come from the data and are escaped.
#include "core/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kbench::web {

struct BoxSide {
  std::string label; // "reference", "candidate"
  std::string css;   // "ref" or "cand"
  SampleStats stats; // min, p10, median, p90, max, mean (µs)
};
std::string timing_boxes(const std::vector<BoxSide>& sides);

struct Bar {
  std::string label;
  double value = 0; // drawn against the largest
  std::string text; // shown beside the bar
};
std::string bars(const std::vector<Bar>& values);

struct TurnPoint {
  int turn = 0;
  double microseconds = 0;
};
std::string runtime_by_turn(const std::vector<TurnPoint>& points);

// The roofline of a result's profiled call, or "" when it has no counters to place.
std::string roofline(const EvalResult& result);

} // namespace kbench::web
