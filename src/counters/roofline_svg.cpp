#include "counters/roofline_svg.hpp"

#include "counters/si_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <string_view>

namespace kbench::counters {
namespace {

// A fixed canvas keeps the output byte-stable; only the note band below the legend grows.
constexpr double kWidth = 960;
constexpr double kPlotLeft = 110, kPlotRight = 930, kPlotTop = 60, kPlotBottom = 470;
constexpr double kLegendY = kPlotBottom + 72;
constexpr double kNoteLineHeight = 16;
constexpr std::size_t kMaxLabelChars = 40;
constexpr std::size_t kMaxNoteLineChars = 130;
// Beyond this many decade labels on one axis they overlap; every n-th decade is labelled then.
constexpr int kMaxTickLabels = 12;

constexpr const char* kCandidateColour = "#d62728";
constexpr const char* kReferenceColour = "#1f77b4";
constexpr const char* kRoofColour = "#444444";

using Out = std::back_insert_iterator<std::string>;

bool positive(double value) {
  return std::isfinite(value) && value > 0;
}

bool plottable(const RooflinePoint& point) {
  return positive(point.intensity) && positive(point.flop_per_s);
}

bool is_candidate(const RooflinePoint& point) {
  return point.side == "candidate";
}

// Kernel names are demangled C++ ("f<int, 4>(T&)"): every caller text passes through here.
// Control characters are not allowed in XML 1.0 even as references, so they become '?'.
std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      const bool control = static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n';
      out += control ? '?' : c;
    }
  }
  return out;
}

bool is_utf8_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Counts and cuts in code points so that a multi-byte character is never split in half.
std::string truncate_label(std::string_view text) {
  const auto chars =
      std::count_if(text.begin(), text.end(), [](char c) { return !is_utf8_continuation(c); });
  if (static_cast<std::size_t>(chars) <= kMaxLabelChars) {
    return std::string(text);
  }
  std::size_t kept = 0, end = 0;
  for (; end < text.size(); ++end) {
    if (!is_utf8_continuation(text[end]) && kept++ == kMaxLabelChars - 1) {
      break;
    }
  }
  return std::string(text.substr(0, end)) + "\u2026";
}

// A log10 axis over the whole decades [lo, hi], drawn from pixel px_lo to px_hi.
struct LogAxis {
  int lo = 0, hi = 1;
  double px_lo = 0, px_hi = 1;

  double px_of_log(double exponent) const {
    return px_lo + (exponent - lo) / (hi - lo) * (px_hi - px_lo);
  }
  double px(double value) const { return px_of_log(std::log10(value)); }
};

// One spare decade on each side keeps every roof corner and point off the frame.
LogAxis decade_axis(const std::vector<double>& values, double fallback, double px_lo,
                    double px_hi) {
  double low = fallback, high = fallback;
  if (!values.empty()) {
    const auto [min, max] = std::minmax_element(values.begin(), values.end());
    low = *min;
    high = *max;
  }
  return {static_cast<int>(std::floor(std::log10(low))) - 1,
          static_cast<int>(std::ceil(std::log10(high))) + 1, px_lo, px_hi};
}

// What the chart draws, with the unplottable inputs already set aside.
struct Chart {
  double bandwidth = 0; // 0 when the caller's value cannot be drawn
  std::vector<const RooflineRoof*> roofs;
  std::vector<const RooflinePoint*> points;
  std::vector<std::string> unplotted;
  const RooflineRoof* top_roof = nullptr;
  LogAxis x, y;

  // The intensity where the memory roof reaches `roof`; without a memory roof it has none.
  std::optional<double> ridge(const RooflineRoof& roof) const {
    return bandwidth > 0 ? std::optional<double>(roof.peak_flop_per_s / bandwidth) : std::nullopt;
  }
};

Chart make_chart(double peak_bytes_per_s, const std::vector<RooflineRoof>& roofs,
                 const std::vector<RooflinePoint>& points) {
  Chart chart;
  chart.bandwidth = positive(peak_bytes_per_s) ? peak_bytes_per_s : 0;
  std::vector<double> xs, ys;
  for (const RooflineRoof& roof : roofs) {
    // A roof without a finite positive peak has no place on a log axis; it is left out.
    if (!positive(roof.peak_flop_per_s)) {
      continue;
    }
    chart.roofs.push_back(&roof);
    if (!chart.top_roof || roof.peak_flop_per_s > chart.top_roof->peak_flop_per_s) {
      chart.top_roof = &roof;
    }
    ys.push_back(roof.peak_flop_per_s);
    if (const auto ridge = chart.ridge(roof); ridge && positive(*ridge)) {
      xs.push_back(*ridge);
    }
  }
  for (const RooflinePoint& point : points) {
    if (plottable(point)) {
      chart.points.push_back(&point);
      xs.push_back(point.intensity);
      ys.push_back(point.flop_per_s);
    } else {
      chart.unplotted.push_back(truncate_label(point.label));
    }
  }
  // Without a flat roof nothing else keeps the memory roof in view: it is the bound at each
  // point's intensity, so those heights join the y range.
  if (!chart.top_roof && chart.bandwidth > 0) {
    for (const double x : xs.empty() ? std::vector<double>{1.0} : xs) {
      ys.push_back(chart.bandwidth * x);
    }
  }
  chart.x = decade_axis(xs, 1.0, kPlotLeft, kPlotRight);
  chart.y = decade_axis(ys, 1e12, kPlotBottom, kPlotTop);
  return chart;
}

// The names of the points left out, wrapped so that the note stays inside the canvas.
std::vector<std::string> note_lines(const std::vector<std::string>& unplotted) {
  std::vector<std::string> lines;
  if (unplotted.empty()) {
    return lines;
  }
  lines.emplace_back("not plotted (no DRAM traffic or no FLOPs): ");
  bool line_has_name = false;
  for (std::size_t i = 0; i < unplotted.size(); ++i) {
    const std::string item = unplotted[i] + (i + 1 < unplotted.size() ? ", " : "");
    if (line_has_name && lines.back().size() + item.size() > kMaxNoteLineChars) {
      lines.emplace_back();
    }
    lines.back() += item;
    line_has_name = true;
  }
  return lines;
}

double canvas_height(std::size_t note_line_count) {
  return kLegendY + 18 + kNoteLineHeight * static_cast<double>(note_line_count);
}

void write_header(Out out, const std::string& title, double height) {
  fmt::format_to(out,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" "
                 "height=\"{1}\" viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" "
                 "font-size=\"12\">\n",
                 kWidth, height);
  fmt::format_to(out, "<title>{}</title>\n", xml_escape(title));
  fmt::format_to(out, "<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", kWidth, height);
  fmt::format_to(out,
                 "<text class=\"chart-title\" x=\"{:.2f}\" y=\"32\" text-anchor=\"middle\" "
                 "font-size=\"16\">{}</text>\n",
                 kWidth / 2, xml_escape(title));
}

int tick_label_step(const LogAxis& axis) {
  const int decades = axis.hi - axis.lo + 1;
  return (decades + kMaxTickLabels - 1) / kMaxTickLabels;
}

void write_x_ticks(Out out, const LogAxis& x) {
  const int step = tick_label_step(x);
  for (int e = x.lo; e <= x.hi; ++e) {
    const double px = x.px_of_log(e);
    fmt::format_to(out,
                   "<line class=\"grid-x\" id=\"grid-x-{}\" x1=\"{:.2f}\" y1=\"{:.2f}\" "
                   "x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#e0e0e0\"/>\n",
                   e, px, kPlotTop, px, kPlotBottom);
    if ((e - x.lo) % step == 0) {
      fmt::format_to(out,
                     "<text class=\"tick-x\" x=\"{:.2f}\" y=\"{:.2f}\" "
                     "text-anchor=\"middle\">{}</text>\n",
                     px, kPlotBottom + 18, format_si(std::pow(10.0, e), "", true));
    }
  }
}

void write_y_ticks(Out out, const LogAxis& y) {
  const int step = tick_label_step(y);
  for (int e = y.lo; e <= y.hi; ++e) {
    const double px = y.px_of_log(e);
    fmt::format_to(out,
                   "<line class=\"grid-y\" id=\"grid-y-{}\" x1=\"{:.2f}\" y1=\"{:.2f}\" "
                   "x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#e0e0e0\"/>\n",
                   e, kPlotLeft, px, kPlotRight, px);
    if ((e - y.lo) % step == 0) {
      fmt::format_to(out,
                     "<text class=\"tick-y\" x=\"{:.2f}\" y=\"{:.2f}\" "
                     "text-anchor=\"end\">{}</text>\n",
                     kPlotLeft - 8, px + 4, format_si(std::pow(10.0, e), "FLOP/s", true));
    }
  }
}

void write_axes(Out out, const Chart& chart) {
  write_x_ticks(out, chart.x);
  write_y_ticks(out, chart.y);
  fmt::format_to(out,
                 "<rect class=\"plot-area\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
                 "height=\"{:.2f}\" fill=\"none\" stroke=\"#999999\"/>\n",
                 kPlotLeft, kPlotTop, kPlotRight - kPlotLeft, kPlotBottom - kPlotTop);
  fmt::format_to(out,
                 "<text class=\"axis-title\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">"
                 "arithmetic intensity (FLOP/byte, DRAM)</text>\n",
                 (kPlotLeft + kPlotRight) / 2, kPlotBottom + 42);
  const double mid_y = (kPlotTop + kPlotBottom) / 2;
  fmt::format_to(out,
                 "<text class=\"axis-title\" x=\"22\" y=\"{0:.2f}\" text-anchor=\"middle\" "
                 "transform=\"rotate(-90 22 {0:.2f})\">performance (FLOP/s)</text>\n",
                 mid_y);
}

// The memory roof in log coordinates, clipped to the plot: it rises from the left edge (or
// the bottom, for a slow memory) to the top roof's ridge point, where the flat roofs take over.
struct Segment {
  double x1, y1, x2, y2; // log10 of intensity and of FLOP/s
};

std::optional<Segment> memory_roof(const Chart& chart) {
  if (chart.bandwidth <= 0) {
    return std::nullopt;
  }
  const double offset = std::log10(chart.bandwidth);
  double end_x = chart.x.hi, end_y = end_x + offset;
  if (chart.top_roof) {
    // Taken from the peak itself so the corner matches the flat roof's start to the bit.
    end_x = std::log10(*chart.ridge(*chart.top_roof));
    end_y = std::log10(chart.top_roof->peak_flop_per_s);
  }
  if (end_y > chart.y.hi) {
    end_x = chart.y.hi - offset;
    end_y = chart.y.hi;
  }
  const double start_x = std::max<double>(chart.x.lo, chart.y.lo - offset);
  if (start_x >= end_x) {
    return std::nullopt;
  }
  return Segment{start_x, start_x + offset, end_x, end_y};
}

void write_memory_roof(Out out, const Chart& chart) {
  const auto roof = memory_roof(chart);
  if (!roof) {
    return;
  }
  const double x1 = chart.x.px_of_log(roof->x1), y1 = chart.y.px_of_log(roof->y1);
  const double x2 = chart.x.px_of_log(roof->x2), y2 = chart.y.px_of_log(roof->y2);
  fmt::format_to(out,
                 "<line class=\"roof-memory\" id=\"roof-memory\" x1=\"{:.2f}\" y1=\"{:.2f}\" "
                 "x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                 x1, y1, x2, y2, kRoofColour);
  // The label runs along the slope, a third of the way up, just above the line.
  const double angle = std::atan2(y2 - y1, x2 - x1) * 180 / std::acos(-1.0);
  const double lx = x1 + (x2 - x1) / 3, ly = y1 + (y2 - y1) / 3;
  fmt::format_to(out,
                 "<text class=\"roof-label\" x=\"0\" y=\"-6\" fill=\"{}\" "
                 "transform=\"translate({:.2f} {:.2f}) rotate({:.2f})\">DRAM {}</text>\n",
                 kRoofColour, lx, ly, angle, xml_escape(format_si(chart.bandwidth, "B/s")));
}

void write_flat_roof(Out out, const Chart& chart, const RooflineRoof& roof, std::size_t index) {
  const auto ridge = chart.ridge(roof);
  const double x1 = ridge ? chart.x.px(*ridge) : kPlotLeft;
  const double y = chart.y.px(roof.peak_flop_per_s);
  fmt::format_to(out,
                 "<line class=\"roof-flat\" id=\"roof-flat-{}\" x1=\"{:.2f}\" y1=\"{:.2f}\" "
                 "x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                 index, x1, y, kPlotRight, y, kRoofColour);
  fmt::format_to(out,
                 "<text class=\"roof-label\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\" "
                 "fill=\"{}\">{}</text>\n",
                 kPlotRight - 6, y - 6, kRoofColour,
                 xml_escape(roof.label + " " + format_si(roof.peak_flop_per_s, "FLOP/s")));
}

void write_roofs(Out out, const Chart& chart) {
  write_memory_roof(out, chart);
  for (std::size_t i = 0; i < chart.roofs.size(); ++i) {
    write_flat_roof(out, chart, *chart.roofs[i], i);
  }
}

// Shape as well as colour tells the sides apart, for readers who cannot tell red from blue.
void write_marker(Out out, bool candidate, double cx, double cy) {
  if (candidate) {
    fmt::format_to(out,
                   "<circle class=\"marker\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"5\" fill=\"{}\" "
                   "stroke=\"#ffffff\"/>\n",
                   cx, cy, kCandidateColour);
  } else {
    fmt::format_to(out,
                   "<rect class=\"marker\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"9\" height=\"9\" "
                   "fill=\"{}\" stroke=\"#ffffff\"/>\n",
                   cx - 4.5, cy - 4.5, kReferenceColour);
  }
}

void write_point(Out out, const Chart& chart, const RooflinePoint& point) {
  const bool candidate = is_candidate(point);
  const double cx = chart.x.px(point.intensity), cy = chart.y.px(point.flop_per_s);
  fmt::format_to(out, "<g class=\"point {}\" transform=\"translate({:.2f} {:.2f})\">\n",
                 candidate ? "candidate" : "reference", cx, cy);
  fmt::format_to(out, "<title>{}&#10;intensity {}&#10;performance {}</title>\n",
                 xml_escape(point.label), format_si(point.intensity, "FLOP/B"),
                 format_si(point.flop_per_s, "FLOP/s"));
  write_marker(out, candidate, 0, 0);
  // Labels of points in the right half go to the marker's left so they stay on the canvas.
  const bool label_left = cx > (kPlotLeft + kPlotRight) / 2;
  fmt::format_to(out, "<text x=\"{}\" y=\"4\" font-size=\"10\" text-anchor=\"{}\">{}</text>\n",
                 label_left ? -8 : 8, label_left ? "end" : "start",
                 xml_escape(truncate_label(point.label)));
  fmt::format_to(out, "</g>\n");
}

void write_legend(Out out) {
  fmt::format_to(out, "<g class=\"legend\" transform=\"translate({:.2f} {:.2f})\">\n", kPlotLeft,
                 kLegendY);
  write_marker(out, true, 0, -4);
  fmt::format_to(out, "<text x=\"10\" y=\"0\">candidate</text>\n");
  write_marker(out, false, 110, -4);
  fmt::format_to(out, "<text x=\"120\" y=\"0\">reference</text>\n</g>\n");
}

void write_note(Out out, const std::vector<std::string>& lines) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    fmt::format_to(
        out, "<text class=\"note\" x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"11\">{}</text>\n",
        kPlotLeft, kLegendY + 24 + kNoteLineHeight * static_cast<double>(i), xml_escape(lines[i]));
  }
}

} // namespace

std::string roofline_svg(const std::string& title, double peak_bytes_per_s,
                         const std::vector<RooflineRoof>& roofs,
                         const std::vector<RooflinePoint>& points) {
  const Chart chart = make_chart(peak_bytes_per_s, roofs, points);
  const std::vector<std::string> note = note_lines(chart.unplotted);
  std::string svg;
  const Out out(svg);
  write_header(out, title, canvas_height(note.size()));
  write_axes(out, chart);
  write_roofs(out, chart);
  for (const RooflinePoint* point : chart.points) {
    write_point(out, chart, *point);
  }
  write_legend(out);
  write_note(out, note);
  svg += "</svg>\n";
  return svg;
}

} // namespace kbench::counters
