#include "counters/embedded_data.hpp"
#include "counters/gpu_specs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace kbench::counters {
namespace {

using nlohmann::json;

const std::vector<std::string> kRequired = {"fp64", "fp32", "tf32", "fp16", "bf16", "int8"};

// The attributes the driver of kbench's H200 machine reports (docs/gpu-validation.md), with the
// L2 size the table records for H200.
sched::GpuInfo h200() {
  sched::GpuInfo gpu;
  gpu.name = "NVIDIA H200";
  gpu.cc_major = 9;
  gpu.cc_minor = 0;
  gpu.sm_count = 132;
  gpu.l2_bytes = 62914560;
  gpu.memory_bytes = 150754820096LL;
  gpu.sm_clock_khz = 1980000;
  gpu.memory_clock_khz = 3201000;
  gpu.memory_bus_bits = 6016; // not the nominal 6144 (docs/gpu-validation.md)
  return gpu;
}

// A device whose attributes are exactly those of a table row.
sched::GpuInfo device_of_row(const json& row) {
  sched::GpuInfo gpu;
  gpu.name = row["names"][0].get<std::string>();
  const std::string cc = row["compute_capability"].get<std::string>();
  gpu.cc_major = std::stoi(cc.substr(0, cc.find('.')));
  gpu.cc_minor = std::stoi(cc.substr(cc.find('.') + 1));
  gpu.sm_count = row["sm_count"]["value"].get<int>();
  gpu.l2_bytes = row["l2_bytes"]["value"].get<long long>();
  gpu.sm_clock_khz = static_cast<int>(row["boost_clock_mhz"]["value"].get<double>() * 1000);
  gpu.memory_clock_khz = static_cast<int>(row["memory_clock_mhz"]["value"].get<double>() * 1000);
  gpu.memory_bus_bits = row["memory_bus_bits"]["value"].get<int>();
  return gpu;
}

const json& architecture(const std::string& cc) {
  for (const auto& arch : peak_table()["architectures"]) {
    if (arch["compute_capability"] == cc) {
      return arch;
    }
  }
  throw std::runtime_error("no architecture " + cc);
}

std::string without(const std::string& text, const std::string& remove) {
  std::string out = text;
  const auto at = out.find(remove);
  EXPECT_NE(at, std::string::npos) << remove;
  out.erase(at, remove.size());
  return out;
}

// The error message of parsing `text`, or "" if it parsed.
std::string parse_error(const std::string& text) {
  try {
    parse_peak_table(text);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "";
}

TEST(GpuPeakTable, ParsesAndHasTheRowsKbenchNeeds) {
  ASSERT_NO_THROW(peak_table());
  EXPECT_EQ(peak_table()["schema"], "kbench.gpu_peaks/1");
  const auto rows = peak_table_rows();
  for (const char* wanted : {"H100 SXM", "H100 PCIe", "H200 SXM", "H200 NVL", "A100 SXM4 40GB",
                             "A100 SXM4 80GB", "L40S", "L4", "A10G", "B200"}) {
    EXPECT_NE(std::find(rows.begin(), rows.end(), wanted), rows.end()) << wanted;
  }
}

TEST(GpuPeakTable, EveryRowHasEveryRequiredFigureWithASource) {
  for (const auto& name : peak_table_rows()) {
    const auto specs = specs_for_row(name);
    ASSERT_TRUE(specs) << name;
    EXPECT_TRUE(specs->from_table);
    EXPECT_TRUE(specs->note.empty()) << name;
    EXPECT_GT(specs->sm_count, 0) << name;
    EXPECT_GT(specs->l2_bytes, 0) << name;
    EXPECT_GT(specs->boost_clock_mhz, 0) << name;
    EXPECT_GT(specs->dram_bandwidth_gbs.value, 0) << name;
    EXPECT_FALSE(specs->dram_bandwidth_gbs.source.empty()) << name;
    for (const auto& precision : kRequired) {
      ASSERT_TRUE(specs->dense_tflops.count(precision)) << name << " lacks " << precision;
      EXPECT_GT(specs->dense_tflops.at(precision).value, 0) << name << " " << precision;
      EXPECT_FALSE(specs->dense_tflops.at(precision).source.empty()) << name << " " << precision;
    }
  }
  for (const auto& row : peak_table()["gpus"]) {
    for (const char* key : {"sm_count", "l2_bytes", "boost_clock_mhz", "memory_clock_mhz",
                            "memory_bus_bits", "dram_bandwidth_gbs"}) {
      EXPECT_FALSE(row[key]["source"].get<std::string>().empty()) << row["row"] << " " << key;
    }
  }
}

TEST(GpuPeakTable, Fp8OnlyFromAdaOn) {
  for (const auto& row : peak_table()["gpus"]) {
    const bool has_fp8 = row["dense_tflops"].contains("fp8");
    const double cc = std::stod(row["compute_capability"].get<std::string>());
    EXPECT_EQ(has_fp8, cc >= 8.9) << row["row"];
  }
}

TEST(GpuPeakTable, DenseFiguresAreHalfTheSparseDatasheetOnes) {
  const auto h100 = *specs_for_row("H100 SXM");
  EXPECT_DOUBLE_EQ(h100.dense_tflops.at("bf16").value, 989.4); // datasheet: 1,979 with sparsity
  EXPECT_DOUBLE_EQ(h100.dense_tflops.at("fp8").value, 1978.9);
  EXPECT_DOUBLE_EQ(h100.dense_tflops.at("tf32").value, 494.7);
  EXPECT_DOUBLE_EQ(specs_for_row("A100 SXM4 80GB")->dense_tflops.at("bf16").value, 312);
  int sparse_figures = 0;
  for (const auto& row : peak_table()["gpus"]) {
    for (const auto& [precision, figure] : row["dense_tflops"].items()) {
      if (!figure.contains("with_sparsity")) {
        continue;
      }
      ++sparse_figures;
      const double dense = figure["value"].get<double>();
      const double sparse = figure["with_sparsity"].get<double>();
      EXPECT_LT(dense, sparse) << row["row"] << " " << precision;
      // 1.5 %: the L40S datasheet pairs 362.05 dense with 733 sparse.
      EXPECT_NEAR(dense, sparse / 2, sparse / 2 * 0.015) << row["row"] << " " << precision;
    }
  }
  EXPECT_GT(sparse_figures, 40);
}

// A typo, a sparse figure left undivided or a figure in the wrong row shows up as a row whose
// datasheet peak is far from SMs x per-SM rate x boost clock. NVIDIA quotes tensor peaks below
// the maximum clock (H100: 1830 of 1980 MHz; H200 NVL lower still), hence the band.
TEST(GpuPeakTable, RowFiguresAgreeWithThePerSmRates) {
  for (const auto& row : peak_table()["gpus"]) {
    const json& rates = architecture(row["compute_capability"])["per_sm_per_clock"];
    const double sms = row["sm_count"]["value"].get<double>();
    const double mhz = row["boost_clock_mhz"]["value"].get<double>();
    for (const auto& [precision, figure] : row["dense_tflops"].items()) {
      ASSERT_TRUE(rates.contains(precision)) << row["row"] << " " << precision;
      const double derived = sms * rates[precision]["value"].get<double>() * mhz * 1e6 / 1e12;
      const double ratio = figure["value"].get<double>() / derived;
      EXPECT_GT(ratio, 0.84) << row["row"] << " " << precision;
      EXPECT_LT(ratio, 1.05) << row["row"] << " " << precision;
    }
  }
}

TEST(GpuPeakTable, BandwidthAgreesWithMemoryClockAndBus) {
  for (const auto& row : peak_table()["gpus"]) {
    const double derived = row["memory_clock_mhz"]["value"].get<double>() * 1e6 *
                           row["memory_bus_bits"]["value"].get<double>() * 2 / 8 / 1e9;
    EXPECT_NEAR(row["dram_bandwidth_gbs"]["value"].get<double>(), derived, derived * 0.05)
        << row["row"];
  }
}

TEST(ResolveSpecs, H200PicksItsRowWithAnEmptyNote) {
  const GpuSpecs specs = resolve_specs(h200());
  EXPECT_EQ(specs.row, "H200 SXM");
  EXPECT_TRUE(specs.from_table);
  EXPECT_EQ(specs.note, "");
  EXPECT_EQ(specs.sm_count, 132);
  EXPECT_DOUBLE_EQ(specs.dram_bandwidth_gbs.value, 4800);
  EXPECT_DOUBLE_EQ(specs.dense_tflops.at("bf16").value, 989.4);
  EXPECT_DOUBLE_EQ(specs.dense_tflops.at("fp32").value, 66.9);
  EXPECT_EQ(specs.dense_tflops.at("bf16").source.rfind("derived", 0), std::string::npos);
}

TEST(ResolveSpecs, EveryRowResolvesFromADeviceWithItsAttributes) {
  for (const auto& row : peak_table()["gpus"]) {
    const GpuSpecs specs = resolve_specs(device_of_row(row));
    EXPECT_EQ(specs.row, row["row"].get<std::string>()) << specs.note;
    EXPECT_TRUE(specs.from_table);
  }
}

TEST(ResolveSpecs, ToleratesDriverRoundingButNotAnotherProduct) {
  auto gpu = h200();
  gpu.memory_clock_khz = 3199000; // what ncu saw
  gpu.l2_bytes = 62914560 + 4096;
  EXPECT_TRUE(resolve_specs(gpu).from_table);
  gpu = h200();
  gpu.l2_bytes = 52428800; // H100 SXM's 50 MiB
  const GpuSpecs specs = resolve_specs(gpu);
  EXPECT_FALSE(specs.from_table);
  EXPECT_NE(specs.note.find("L2 of 52428800 bytes (table: 62914560)"), std::string::npos)
      << specs.note;
}

TEST(ResolveSpecs, AcceptsTheBusWidthOlderDriversReport) {
  const json* b200 = nullptr;
  for (const auto& row : peak_table()["gpus"]) {
    if (row["row"] == "B200") {
      b200 = &row;
    }
  }
  ASSERT_NE(b200, nullptr);
  auto gpu = device_of_row(*b200);
  gpu.memory_bus_bits = 8192;
  EXPECT_TRUE(resolve_specs(gpu).from_table);
  gpu.memory_bus_bits = 4096;
  EXPECT_FALSE(resolve_specs(gpu).from_table);
}

TEST(ResolveSpecs, ADifferentSmCountFallsBackToDerivedFigures) {
  auto gpu = h200();
  gpu.sm_count = 114;
  const GpuSpecs specs = resolve_specs(gpu);
  EXPECT_FALSE(specs.from_table);
  EXPECT_EQ(specs.row, "derived from the device");
  EXPECT_NE(specs.note.find("H200 SXM"), std::string::npos) << specs.note;
  EXPECT_NE(specs.note.find("114 SMs (table: 132)"), std::string::npos) << specs.note;
  EXPECT_EQ(specs.sm_count, 114);
  // Hopper: 4096 dense BF16 FLOP per clock per SM, 256 FP32.
  EXPECT_NEAR(specs.dense_tflops.at("bf16").value, 114 * 4096 * 1980e6 / 1e12, 1e-9);
  EXPECT_NEAR(specs.dense_tflops.at("fp32").value, 114 * 256 * 1980e6 / 1e12, 1e-9);
  EXPECT_EQ(specs.dense_tflops.at("bf16").source.rfind("derived: 114 SMs", 0), 0u)
      << specs.dense_tflops.at("bf16").source;
  EXPECT_NEAR(specs.dram_bandwidth_gbs.value, 3201e6 * 6016 * 2 / 8 / 1e9, 1e-9);
  EXPECT_EQ(specs.dram_bandwidth_gbs.source.rfind("derived:", 0), 0u);
}

TEST(ResolveSpecs, AnUnknownGpuIsDerived) {
  auto gpu = h200();
  gpu.name = "NVIDIA Hypothetical 9000";
  const GpuSpecs specs = resolve_specs(gpu);
  EXPECT_FALSE(specs.from_table);
  EXPECT_NE(specs.note.find("\"NVIDIA Hypothetical 9000\" is not in the GPU peak table"),
            std::string::npos)
      << specs.note;
  EXPECT_NEAR(specs.dram_bandwidth_gbs.value, 4814.3, 0.1); // 3201 MHz x 6016 bit x 2 / 8
  EXPECT_NEAR(specs.dense_tflops.at("fp8").value, 132 * 8192 * 1.98e9 / 1e12, 1e-9);
  for (const auto& [precision, figure] : specs.dense_tflops) {
    EXPECT_EQ(figure.source.rfind("derived:", 0), 0u) << precision;
  }
}

TEST(ResolveSpecs, AnUnknownArchitectureHasNoFlopFigures) {
  auto gpu = h200();
  gpu.name = "NVIDIA Future";
  gpu.cc_major = 12;
  gpu.cc_minor = 7;
  const GpuSpecs specs = resolve_specs(gpu);
  EXPECT_TRUE(specs.dense_tflops.empty());
  EXPECT_NE(specs.note.find("compute capability 12.7"), std::string::npos) << specs.note;
  EXPECT_GT(specs.dram_bandwidth_gbs.value, 0);
}

TEST(ResolveSpecs, NamesMatchWholeIgnoringCase) {
  auto gpu = h200();
  gpu.name = "nvidia h200  ";
  EXPECT_EQ(resolve_specs(gpu).row, "H200 SXM");
  gpu.name = "NVIDIA H200 NVL"; // another product, with its own row and clock
  EXPECT_EQ(resolve_specs(gpu).row, "H200 NVL");
  gpu.name = "NVIDIA H20";
  EXPECT_FALSE(resolve_specs(gpu).from_table);
}

TEST(SpecsForRow, FindsRowsByNameAndNotOthers) {
  EXPECT_FALSE(specs_for_row("No Such GPU"));
  EXPECT_FALSE(specs_for_row("H100"));
  ASSERT_TRUE(specs_for_row("h100 sxm"));
  EXPECT_EQ(specs_for_row("h100 sxm")->row, "H100 SXM");
}

TEST(ToJson, CarriesEveryFigureWithItsSource) {
  const json doc = to_json(*specs_for_row("L4"));
  EXPECT_EQ(doc["row"], "L4");
  EXPECT_TRUE(doc["from_table"].get<bool>());
  EXPECT_EQ(doc["sm_count"], 58);
  EXPECT_DOUBLE_EQ(doc["dram_bandwidth_gbs"]["value"].get<double>(), 300);
  EXPECT_DOUBLE_EQ(doc["dense_tflops"]["fp8"]["value"].get<double>(), 242.5);
  EXPECT_FALSE(doc["dense_tflops"]["fp8"]["source"].get<std::string>().empty());
  EXPECT_TRUE(doc["units"].contains("dense_tflops"));
}

TEST(ParsePeakTable, MalformedTablesNameTheField) {
  const std::string good(embedded::kGpuPeaksJson);
  EXPECT_EQ(parse_error(good), "");
  EXPECT_NE(parse_error("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(parse_error(R"({"schema": "other", "gpus": []})").find("schema"), std::string::npos);

  // The first row's fp16 figure without its source.
  json table = json::parse(good);
  table["gpus"][0]["dense_tflops"]["fp16"].erase("source");
  EXPECT_NE(parse_error(table.dump()).find("gpus[0] (\"H100 SXM\").dense_tflops.fp16.source"),
            std::string::npos)
      << parse_error(table.dump());

  table = json::parse(good);
  table["gpus"][2]["dense_tflops"].erase("int8");
  EXPECT_NE(parse_error(table.dump()).find("dense_tflops.int8"), std::string::npos);

  table = json::parse(good);
  table["gpus"][0]["dense_tflops"]["bf16"]["with_sparsity"] = 100;
  EXPECT_NE(parse_error(table.dump()).find("bf16.with_sparsity"), std::string::npos);

  table = json::parse(good);
  table["gpus"][1]["sm_count"]["value"] = "many";
  EXPECT_NE(parse_error(table.dump()).find("gpus[1] (\"H100 PCIe\").sm_count.value"),
            std::string::npos);

  table = json::parse(good);
  table["gpus"][1]["l2_bytes"]["value"] = 52428800.5;
  EXPECT_NE(parse_error(table.dump()).find("gpus[1] (\"H100 PCIe\").l2_bytes.value"),
            std::string::npos);

  table = json::parse(good);
  table["architectures"][0]["per_sm_per_clock"]["fp32"]["value"] = -1;
  EXPECT_NE(parse_error(table.dump()).find("architectures[0].per_sm_per_clock.fp32.value"),
            std::string::npos);

  EXPECT_NE(parse_error(without(good, R"("names": ["NVIDIA L4"],)")).find(".names"),
            std::string::npos);
}

} // namespace
} // namespace kbench::counters
