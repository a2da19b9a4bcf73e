#include "counters/roofline_svg.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kbench::counters {
namespace {

// Every '<' must open a well-named tag and elements must close in order; a raw '<' from a
// kernel name ("k<float, 4>") fails either test. Returns an empty string when balanced.
std::string tag_balance_error(const std::string& xml) {
  std::vector<std::string> open;
  std::size_t pos = 0;
  while ((pos = xml.find('<', pos)) != std::string::npos) {
    const std::size_t end = xml.find('>', pos);
    if (end == std::string::npos) {
      return "unterminated tag at " + std::to_string(pos);
    }
    const std::string tag = xml.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag.find('<') != std::string::npos) {
      return "'<' inside tag <" + tag + ">";
    }
    if (tag.starts_with("?")) {
      continue;
    }
    const bool closing = tag.starts_with("/");
    const std::string body = closing ? tag.substr(1) : tag;
    const std::string name = body.substr(0, body.find_first_of(" \t\n/"));
    const bool valid_name =
        !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) &&
        std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':';
        });
    if (!valid_name) {
      return "bad tag <" + tag + ">";
    }
    if (closing) {
      if (open.empty() || open.back() != name) {
        return "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
      }
      open.pop_back();
    } else if (!tag.ends_with("/")) {
      open.push_back(name);
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

// Every '&' must start one of the five predefined entities or a numeric reference.
bool ampersands_are_entities(const std::string& xml) {
  for (std::size_t pos = xml.find('&'); pos != std::string::npos; pos = xml.find('&', pos + 1)) {
    const std::size_t semi = xml.find(';', pos);
    if (semi == std::string::npos) {
      return false;
    }
    const std::string entity = xml.substr(pos + 1, semi - pos - 1);
    const bool named =
        entity == "amp" || entity == "lt" || entity == "gt" || entity == "quot" || entity == "apos";
    const bool numeric = entity.size() > 1 && entity[0] == '#' &&
                         std::all_of(entity.begin() + 1, entity.end(), [](char c) {
                           return std::isdigit(static_cast<unsigned char>(c));
                         });
    if (!named && !numeric) {
      return false;
    }
  }
  return true;
}

// The opening tag of every element carrying `marker` (an attribute such as class="x").
std::vector<std::string> tags_with(const std::string& xml, const std::string& marker) {
  std::vector<std::string> tags;
  for (std::size_t pos = xml.find(marker); pos != std::string::npos;
       pos = xml.find(marker, pos + 1)) {
    const std::size_t begin = xml.rfind('<', pos);
    tags.push_back(xml.substr(begin, xml.find('>', pos) - begin + 1));
  }
  return tags;
}

std::string tag_with(const std::string& xml, const std::string& marker) {
  const auto tags = tags_with(xml, marker);
  EXPECT_EQ(tags.size(), 1u) << marker;
  return tags.empty() ? "" : tags.front();
}

double attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t pos = tag.find(key);
  EXPECT_NE(pos, std::string::npos) << name << " in " << tag;
  return pos == std::string::npos ? std::nan("") : std::stod(tag.substr(pos + key.size()));
}

struct Position {
  double x, y;
};

// Point groups are placed with transform="translate(x y)".
std::vector<Position> point_positions(const std::string& svg) {
  std::vector<Position> positions;
  for (const std::string& tag : tags_with(svg, "class=\"point ")) {
    const std::size_t open = tag.find("translate(") + 10;
    const std::size_t space = tag.find(' ', open);
    positions.push_back({std::stod(tag.substr(open, space - open)), std::stod(tag.substr(space))});
  }
  return positions;
}

// The text content of each <text> element whose opening tag carries `marker`.
std::vector<std::string> texts_with(const std::string& svg, const std::string& marker) {
  std::vector<std::string> texts;
  for (std::size_t pos = svg.find(marker); pos != std::string::npos;
       pos = svg.find(marker, pos + 1)) {
    const std::size_t begin = svg.find('>', pos) + 1;
    texts.push_back(svg.substr(begin, svg.find("</text>", begin) - begin));
  }
  return texts;
}

const std::vector<RooflineRoof> kH200Roofs = {{"FP32", 66.9e12}, {"FP16 tensor", 989e12}};

std::string h200_chart(const std::vector<RooflinePoint>& points) {
  return roofline_svg("softmax on H200", 4.8e12, kH200Roofs, points);
}

TEST(RooflineSvg, IsOneBalancedSvgDocument) {
  const std::string svg =
      h200_chart({{"ref_kernel", "reference", 0.5, 2e12}, {"cand_kernel", "candidate", 8, 30e12}});
  EXPECT_TRUE(svg.starts_with("<svg ")) << svg.substr(0, 80);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  const std::string root = svg.substr(0, svg.find('>') + 1);
  EXPECT_NE(root.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  for (const char* key : {"width", "height", "viewBox"}) {
    EXPECT_NE(root.find(std::string(" ") + key + "=\""), std::string::npos) << key;
  }
  EXPECT_EQ(tag_balance_error(svg), "");
  EXPECT_TRUE(ampersands_are_entities(svg));
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_NE(svg.find(">arithmetic intensity (FLOP/byte, DRAM)<"), std::string::npos);
  EXPECT_NE(svg.find(">performance (FLOP/s)<"), std::string::npos);
}

TEST(RooflineSvg, BalanceCheckerCatchesRawMarkup) {
  EXPECT_NE(tag_balance_error("<svg><text>k<float, 4></text></svg>"), "");
  EXPECT_NE(tag_balance_error("<svg><text>k<int></text></svg>"), "");
  EXPECT_NE(tag_balance_error("<svg><g></svg>"), "");
  EXPECT_EQ(tag_balance_error("<svg><g><line/></g></svg>"), "");
  EXPECT_FALSE(ampersands_are_entities("a & b"));
}

TEST(RooflineSvg, EscapesEveryCallerText) {
  const std::string name = "void k<float, 4>(Foo&, \"q\", 'c')";
  const std::string svg =
      roofline_svg("A & B <test>", 4.8e12, {{"FP32 <fma>", 66.9e12}},
                   {{name, "candidate", 2, 1e12}, {"bad<int>&", "reference", 0, 1e12}});
  EXPECT_EQ(tag_balance_error(svg), "");
  EXPECT_TRUE(ampersands_are_entities(svg));
  EXPECT_NE(svg.find("void k&lt;float, 4&gt;(Foo&amp;, &quot;q&quot;, &#39;c&#39;)"),
            std::string::npos);
  EXPECT_EQ(svg.find("k<float"), std::string::npos);
  EXPECT_EQ(svg.find("Foo&,"), std::string::npos);
  EXPECT_NE(svg.find("A &amp; B &lt;test&gt;"), std::string::npos);
  EXPECT_NE(svg.find("FP32 &lt;fma&gt; 66.9 TFLOP/s"), std::string::npos);
  EXPECT_NE(svg.find("bad&lt;int&gt;&amp;"), std::string::npos); // in the note
  EXPECT_EQ(svg.find("bad<int>"), std::string::npos);
}

TEST(RooflineSvg, UnplottablePointsAreNamedInTheNote) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::string svg = h200_chart({{"good", "candidate", 4, 1e13},
                                      {"no_bytes", "candidate", 0, 1e13},
                                      {"no_flops", "reference", 3, 0},
                                      {"nan_flops", "reference", 3, nan},
                                      {"inf_intensity", "candidate", inf, 1e12},
                                      {"negative", "reference", -1, 1e12}});
  EXPECT_EQ(tag_balance_error(svg), "");
  EXPECT_EQ(point_positions(svg).size(), 1u);
  const auto notes = texts_with(svg, "class=\"note\"");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes.front(), "not plotted (no DRAM traffic or no FLOPs): no_bytes, no_flops, "
                           "nan_flops, inf_intensity, negative");
  EXPECT_EQ(svg.find("nan"), svg.find("nan_flops")); // no coordinate was written as nan
  EXPECT_EQ(svg.find("inf\""), std::string::npos);
}

TEST(RooflineSvg, NoNoteWhenEveryPointIsPlotted) {
  const std::string svg = h200_chart({{"good", "candidate", 4, 1e13}});
  EXPECT_EQ(svg.find("class=\"note\""), std::string::npos);
  EXPECT_EQ(svg.find("not plotted"), std::string::npos);
}

TEST(RooflineSvg, RoofLabelsCarryTheFormattedPeaks) {
  const std::string svg = h200_chart({});
  const auto labels = texts_with(svg, "class=\"roof-label\"");
  EXPECT_EQ(labels, (std::vector<std::string>{"DRAM 4.80 TB/s", "FP32 66.9 TFLOP/s",
                                              "FP16 tensor 989 TFLOP/s"}));
  // Rounding to three digits can carry into the next prefix.
  const std::string carried = roofline_svg("t", 999.7e9, {{"FP64", 999.6e12}}, {});
  EXPECT_EQ(texts_with(carried, "class=\"roof-label\""),
            (std::vector<std::string>{"DRAM 1.00 TB/s", "FP64 1.00 PFLOP/s"}));
}

TEST(RooflineSvg, TickLabelsAreDecadesWithUnits) {
  // Ridge at 1 FLOP/B and a 1 TFLOP/s roof: the axes run 0.1..10 FLOP/B, 100 GFLOP/s..10 TFLOP/s.
  const std::string svg = roofline_svg("t", 1e12, {{"FP32", 1e12}}, {});
  EXPECT_EQ(texts_with(svg, "class=\"tick-x\""), (std::vector<std::string>{"0.1", "1", "10"}));
  EXPECT_EQ(texts_with(svg, "class=\"tick-y\""),
            (std::vector<std::string>{"100 GFLOP/s", "1 TFLOP/s", "10 TFLOP/s"}));
  const std::string wide = roofline_svg(
      "t", 1e12, {{"FP32", 1e12}}, {{"a", "candidate", 0.05, 2e9}, {"b", "candidate", 40, 1e11}});
  EXPECT_EQ(texts_with(wide, "class=\"tick-x\""),
            (std::vector<std::string>{"0.001", "0.01", "0.1", "1", "10", "100", "1k"}));
  EXPECT_EQ(texts_with(wide, "class=\"tick-y\"").front(), "100 MFLOP/s");
}

TEST(RooflineSvg, MemoryRoofMeetsTheTopFlatRoofAtItsRidgePoint) {
  // 1 TB/s with a 1 TFLOP/s and a 10 TFLOP/s roof: ridges at 1 and 10 FLOP/B.
  const std::string svg =
      roofline_svg("t", 1e12, {{"FP64", 1e12}, {"FP32", 10e12}}, {{"k", "candidate", 2, 5e11}});
  const std::string memory = tag_with(svg, "class=\"roof-memory\"");
  const std::string low = tag_with(svg, "id=\"roof-flat-0\"");
  const std::string top = tag_with(svg, "id=\"roof-flat-1\"");
  EXPECT_NEAR(attribute(memory, "x2"), attribute(top, "x1"), 0.01);
  EXPECT_NEAR(attribute(memory, "y2"), attribute(top, "y1"), 0.01);
  EXPECT_NEAR(attribute(memory, "x2"), attribute(tag_with(svg, "id=\"grid-x-1\""), "x1"), 0.01);
  EXPECT_NEAR(attribute(top, "y1"), attribute(tag_with(svg, "id=\"grid-y-13\""), "y1"), 0.01);
  // The lower roof starts at its own ridge, which lies on the memory roof (y = 1e12 * x).
  EXPECT_NEAR(attribute(low, "x1"), attribute(tag_with(svg, "id=\"grid-x-0\""), "x1"), 0.01);
  const double mx1 = attribute(memory, "x1"), my1 = attribute(memory, "y1");
  const double slope = (attribute(memory, "y2") - my1) / (attribute(memory, "x2") - mx1);
  EXPECT_NEAR(my1 + slope * (attribute(low, "x1") - mx1), attribute(low, "y1"), 0.02);
  // Flat roofs run to the right edge of the plot.
  const std::string area = tag_with(svg, "class=\"plot-area\"");
  EXPECT_NEAR(attribute(top, "x2"), attribute(area, "x") + attribute(area, "width"), 0.01);
  EXPECT_NEAR(attribute(memory, "x1"), attribute(area, "x"), 0.01);
}

TEST(RooflineSvg, AxisRangesHoldEveryPointAndRidgeWithADecadeToSpare) {
  // A ridge at 1e7 FLOP/B and points spread over many decades on both axes.
  const std::string svg = roofline_svg("t", 1e9, {{"FP32", 1e16}},
                                       {{"low", "reference", 0.003, 2e5},
                                        {"high", "candidate", 4000, 8e14},
                                        {"mid", "candidate", 1.5, 3e9}});
  const std::string area = tag_with(svg, "class=\"plot-area\"");
  const double left = attribute(area, "x"), top = attribute(area, "y");
  const double right = left + attribute(area, "width"), bottom = top + attribute(area, "height");
  const double x_decade = (right - left) / (tags_with(svg, "class=\"grid-x\"").size() - 1.0);
  const double y_decade = (bottom - top) / (tags_with(svg, "class=\"grid-y\"").size() - 1.0);
  const auto points = point_positions(svg);
  ASSERT_EQ(points.size(), 3u);
  std::vector<Position> corners = points;
  const std::string memory = tag_with(svg, "class=\"roof-memory\"");
  corners.push_back({attribute(memory, "x2"), attribute(memory, "y2")});
  for (const Position& p : corners) {
    EXPECT_GE(p.x, left + x_decade - 0.01);
    EXPECT_LE(p.x, right - x_decade + 0.01);
    EXPECT_GE(p.y, top + y_decade - 0.01);
    EXPECT_LE(p.y, bottom - y_decade + 0.01);
  }
}

TEST(RooflineSvg, SidesDifferInColourAndShapeAndHaveALegend) {
  const std::string svg =
      h200_chart({{"ref_kernel", "reference", 0.5, 2e12}, {"cand_kernel", "candidate", 8, 30e12}});
  const std::size_t reference = svg.find("<g class=\"point reference\"");
  const std::size_t candidate = svg.find("<g class=\"point candidate\"");
  ASSERT_NE(reference, std::string::npos);
  ASSERT_NE(candidate, std::string::npos);
  const std::string ref_group = svg.substr(reference, svg.find("</g>", reference) - reference);
  const std::string cand_group = svg.substr(candidate, svg.find("</g>", candidate) - candidate);
  EXPECT_NE(ref_group.find("<rect class=\"marker\""), std::string::npos);
  EXPECT_NE(cand_group.find("<circle class=\"marker\""), std::string::npos);
  const auto fill = [](const std::string& group) {
    const std::size_t pos = group.find("fill=\"");
    return group.substr(pos, group.find('"', pos + 6) - pos);
  };
  EXPECT_NE(fill(ref_group), fill(cand_group));
  EXPECT_NE(ref_group.find("<title>ref_kernel&#10;intensity 0.500 FLOP/B&#10;performance "
                           "2.00 TFLOP/s</title>"),
            std::string::npos)
      << ref_group;
  const std::size_t legend = svg.find("<g class=\"legend\"");
  ASSERT_NE(legend, std::string::npos);
  EXPECT_NE(svg.find(">candidate</text>", legend), std::string::npos);
  EXPECT_NE(svg.find(">reference</text>", legend), std::string::npos);
}

TEST(RooflineSvg, LongLabelsAreTruncatedButHoverTextIsWhole) {
  const std::string name = "void at::native::vectorized_elementwise_kernel<4, "
                           "at::native::AddFunctor<float>, std::array<char*, 3> >(int)";
  const std::string svg = h200_chart({{name, "candidate", 8, 30e12}});
  const std::size_t group = svg.find("<g class=\"point candidate\"");
  const std::size_t text = svg.find("<text", group);
  const std::string label =
      svg.substr(svg.find('>', text) + 1, svg.find("</text>", text) - svg.find('>', text) - 1);
  EXPECT_EQ(label, "void at::native::vectorized_elementwise\u2026");
  EXPECT_NE(svg.find("<title>void at::native::vectorized_elementwise_kernel&lt;4, "),
            std::string::npos);
  EXPECT_EQ(tag_balance_error(svg), "");
}

TEST(RooflineSvg, OutputIsDeterministic) {
  const std::vector<RooflinePoint> points = {{"a", "candidate", 2, 1e12}, {"b", "reference", 0, 1}};
  EXPECT_EQ(h200_chart(points), h200_chart(points));
}

TEST(RooflineSvg, SurvivesMissingRoofsAndBandwidth) {
  for (const std::string& svg :
       {roofline_svg("t", 0, {}, {}), roofline_svg("t", std::nan(""), {{"FP32", 1e12}}, {}),
        roofline_svg("t", 1e12, {{"broken", -1}}, {{"k", "candidate", 1, 1e9}})}) {
    EXPECT_EQ(tag_balance_error(svg), "");
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    EXPECT_EQ(svg.find("inf"), std::string::npos);
  }
  // Without a flat roof the memory roof runs until it leaves the plot.
  const std::string memory_only = roofline_svg("t", 1e12, {}, {{"k", "candidate", 1, 1e9}});
  EXPECT_EQ(tags_with(memory_only, "class=\"roof-memory\"").size(), 1u);
}

} // namespace
} // namespace kbench::counters
