#pragma once
// A roofline chart as a standalone SVG document: log-log axes of arithmetic intensity
// (FLOP/byte) against performance (FLOP/s), the device's memory roof and one flat roof per
// precision, and the kernels of the reference and the candidate as labelled points.
#include <string>
#include <vector>

namespace kbench::counters {

struct RooflineRoof {
  std::string label;      // "FP32", "FP16 tensor"
  double peak_flop_per_s; // the flat roof
};

struct RooflinePoint {
  std::string label; // kernel name, shortened by the caller
  std::string side;  // "candidate" or "reference": sets the marker's colour and shape
  double intensity;  // FLOP per DRAM byte (> 0)
  double flop_per_s; // achieved (> 0)
};

// `peak_bytes_per_s` is the DRAM roof's slope. Points with a non-positive coordinate are left
// out and listed in a note under the chart (a log axis cannot place them).
std::string roofline_svg(const std::string& title, double peak_bytes_per_s,
                         const std::vector<RooflineRoof>& roofs,
                         const std::vector<RooflinePoint>& points);

} // namespace kbench::counters
