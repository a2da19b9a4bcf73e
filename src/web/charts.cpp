#include "web/charts.hpp"

#include "counters/roofline_svg.hpp"
#include "web/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kbench::web {

std::string timing_boxes(const std::vector<BoxSide>& sides) {
  // The axis spans the p10-p90 boxes with a margin: one slow outlier (a CPU's noise) would
  // squash the boxes into a line; the whiskers run to min and max, cut at the edges.
  double low = 1e300, high = 0;
  for (const auto& side : sides) {
    low = std::min(low, side.stats.p10);
    high = std::max(high, side.stats.p90);
  }
  if (sides.empty() || !(high > 0) || !(low >= 0)) {
    return "";
  }
  const double margin = std::max(high - low, high * 0.01) * 0.25;
  low = std::max(0.0, low - margin);
  high += margin;
  const double left = 100, width = 520, row = 44;
  const double span = high - low;
  auto x = [&](double v) { return left + (std::clamp(v, low, high) - low) / span * width; };
  std::string svg = fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 660 {}\" width=\"660\" height=\"{}\" role=\"img\">",
      row * sides.size() + 34, row * sides.size() + 34);
  for (std::size_t i = 0; i < sides.size(); ++i) {
    const auto& s = sides[i].stats;
    const double y = 10 + row * i;
    svg += fmt::format("<text x=\"0\" y=\"{:.1f}\">{}</text>", y + 20, escape(sides[i].label));
    svg += fmt::format(
        "<line class=\"axis\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>", x(s.min),
        x(s.max), y + 16, y + 16);
    svg += fmt::format(
        "<rect class=\"box-{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"20\"/>",
        sides[i].css, x(s.p10), y + 6, std::max(1.0, x(s.p90) - x(s.p10)));
    svg += fmt::format("<line class=\"{}\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
                       "stroke-width=\"3\"/>",
                       sides[i].css, x(s.median), x(s.median), y + 4, y + 28);
    svg +=
        fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">median {}, p10–p90 {}–{}, n {}</text>", left,
                    y + 40, microseconds(s.median), microseconds(s.p10), microseconds(s.p90), s.n);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text><text x=\"{:.1f}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{}</text></svg>",
                     left, row * sides.size() + 30, microseconds(low), left + width,
                     row * sides.size() + 30, microseconds(high));
  return svg;
}

std::string bars(const std::vector<Bar>& values) {
  if (values.empty()) {
    return "";
  }
  double most = 0;
  for (const auto& bar : values) {
    most = std::max(most, bar.value);
  }
  const double row = 20;
  std::string svg = fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 660 {0}\" width=\"660\" height=\"{0}\" role=\"img\">",
      row * values.size() + 6);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double y = 4 + row * i;
    const double w = most > 0 ? values[i].value / most * 360 : 0;
    svg += fmt::format("<text x=\"0\" y=\"{:.1f}\">{}</text><rect class=\"bar\" x=\"170\" "
                       "y=\"{:.1f}\" width=\"{:.1f}\" height=\"14\"/><text x=\"{:.1f}\" "
                       "y=\"{:.1f}\">{}</text>",
                       y + 11, escape(values[i].label), y, std::max(1.0, w), 176 + w, y + 11,
                       escape(values[i].text));
  }
  return svg + "</svg>";
}

std::string runtime_by_turn(const std::vector<TurnPoint>& points) {
  if (points.empty()) {
    return "";
  }
  double most = 0;
  int last_turn = 0;
  for (const auto& p : points) {
    most = std::max(most, p.microseconds);
    last_turn = std::max(last_turn, p.turn);
  }
  const double left = 70, width = 560, top = 10, height = 150;
  auto x = [&](int turn) { return left + (last_turn > 0 ? turn * width / last_turn : width / 2); };
  auto y = [&](double us) { return top + height - (most > 0 ? us / most * height : 0); };
  std::string path;
  std::string dots;
  for (const auto& p : points) {
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", x(p.turn), y(p.microseconds));
    dots +=
        fmt::format("<circle class=\"cand\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"><title>turn {}: "
                    "{}</title></circle>",
                    x(p.turn), y(p.microseconds), p.turn, microseconds(p.microseconds));
  }
  return fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 660 190\" width=\"660\" height=\"190\" role=\"img\">"
      "<line class=\"axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
      "<line class=\"axis\" x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\"/>"
      "<text x=\"0\" y=\"{4}\">{5}</text><text x=\"0\" y=\"{2}\">0</text>"
      "<text x=\"{0}\" y=\"{6}\">turn 0</text><text x=\"{3}\" y=\"{6}\" text-anchor=\"end\">turn "
      "{7}</text>"
      "<path class=\"line\" d=\"{8}\"/>{9}</svg>",
      left, top, top + height, left + width, top + 10, microseconds(most), top + height + 18,
      last_turn, path, dots);
}

std::string roofline(const EvalResult& result) {
  if (!result.counters || !result.counters->gpu.is_object()) {
    return "";
  }
  const auto& gpu = result.counters->gpu;
  const double bandwidth_gbs =
      gpu.value("dram_bandwidth_gbs", nlohmann::json::object()).value("value", 0.0);
  std::vector<counters::RooflineRoof> roofs;
  const auto peaks = gpu.value("dense_tflops", nlohmann::json::object()); // items() must not
  for (const auto& [precision, peak] : peaks.items()) {                   // walk a temporary
    if (precision != "int8" && peak.is_object() && peak.value("value", 0.0) > 0) {
      roofs.push_back({precision, peak.value("value", 0.0) * 1e12});
    }
  }
  std::vector<counters::RooflinePoint> points;
  for (const auto& [side, counters] : {std::pair{"candidate", &result.counters->candidate},
                                       std::pair{"reference", &result.counters->reference}}) {
    if (!counters->collected) {
      continue;
    }
    if (!counters->call.is_object()) {
      continue;
    }
    for (const auto& kernel : counters->call.value("kernels", nlohmann::json::array())) {
      const auto fields = kernel.value("fields", nlohmann::json::object());
      const auto value = [&](const char* id) {
        const auto field = fields.value(id, nlohmann::json::object());
        return field.contains("value") && field["value"].is_number() ? field["value"].get<double>()
                                                                     : 0.0;
      };
      const double intensity = value("arithmetic_intensity");
      // FLOP per byte times the bytes per second it moved: the FLOP/s it achieved.
      points.push_back(
          {kernel.value("name", ""), side, intensity, intensity * value("dram_bandwidth") * 1e9});
    }
  }
  if (bandwidth_gbs <= 0 || points.empty()) {
    return "";
  }
  std::string svg = counters::roofline_svg("Roofline", bandwidth_gbs * 1e9, roofs, points);
  const auto start = svg.find("<svg");
  return start == std::string::npos ? "" : svg.substr(start);
}

} // namespace kbench::web
