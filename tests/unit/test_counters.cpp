// The counter derivation over Nsight Compute output recorded on the H200 machine
// (tests/counters/fixtures/: ncu 2025.3.1, raw CSV pages of the sol and full sets for a copy,
// an fp16 and an fp32 matmul, a tiny launch-bound kernel and a two-kernel call).
#include "report/counters_summary.hpp"
#include "pipeline/disassembly.hpp"
#include "counters/kernel_counters.hpp"
#include "counters/ncu_metrics.hpp"
#include "counters/ncu_report.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace kbench::counters;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(KBENCH_SOURCE_DIR) + "/tests/counters/fixtures/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

GpuSpecs h200() {
  GpuSpecs specs;
  specs.row = "H200 (test)";
  specs.from_table = true;
  specs.dram_bandwidth_gbs = {4800, "test"};
  specs.dense_tflops = {{"fp32", {66.9, "test"}},
                        {"fp64", {33.5, "test"}},
                        {"tf32", {494.7, "test"}},
                        {"fp16", {989.4, "test"}},
                        {"bf16", {989.4, "test"}}};
  return specs;
}

CallCounters derive(const std::string& kase, const std::string& set) {
  return derive_call(parse_ncu_csv(fixture(kase + "." + set + ".csv")), set, h200(), {});
}

std::string text_of(const KernelCounters& k, const std::string& id) {
  const CounterField* f = k.field(id);
  return f ? f->text : "<missing field>";
}

} // namespace

TEST(NcuReport, ParsesTheRawPageWithItsMessagesAndThousandsSeparators) {
  const NcuReport report = parse_ncu_csv(fixture("copy.sol.csv"));
  ASSERT_EQ(report.kernels.size(), 1U);
  EXPECT_NE(report.kernels[0].name.find("neg_kernel_cuda"), std::string::npos);
  EXPECT_DOUBLE_EQ(*report.kernels[0].find("gpu__time_duration.sum"), 224576);  // "224,576"
  EXPECT_DOUBLE_EQ(*report.kernels[0].find("dram__bytes_read.sum"), 480007168); // "480,007,168"
  EXPECT_EQ(report.kernels[0].units.at("dram__bytes_read.sum"), "byte");
  EXPECT_EQ(report.kernels[0].text.at("Block Size"), "(128, 1, 1)");
  ASSERT_FALSE(report.messages.empty());
  EXPECT_TRUE(report.messages[0].starts_with("==PROF=="));
  EXPECT_EQ(parse_ncu_csv(fixture("two_kernels.sol.csv")).kernels.size(), 2U);
}

// Seen on the GPU machine with an unwritable $HOME: ncu prints a bare sentence, no "==" prefix,
// before the table.
TEST(NcuReport, ABareSentenceBeforeTheTableIsOneOfNcusMessages) {
  const std::string table = fixture("copy.sol.csv");
  const NcuReport report =
      parse_ncu_csv("Set the HOME environment variable to a writable directory.\n" + table);
  ASSERT_EQ(report.kernels.size(), 1U);
  EXPECT_EQ(report.messages[0], "Set the HOME environment variable to a writable directory.");
  try {
    parse_ncu_csv("\"0\",\"k\"\n");
    FAIL() << "a table without its header row must be an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("expected the header row"), std::string::npos);
  }
}

TEST(NcuReport, AMalformedRowNamesItsLine) {
  try {
    parse_ncu_csv("==PROF== x\n\"ID\",\"Kernel Name\"\n\"\",\"\"\n\"0\",\"k\",\"extra\"\n");
    FAIL() << "a row with more cells than the header must be an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("line 4"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(parse_ncu_csv("==WARNING== No kernels were profiled.\n").kernels.empty());
}

TEST(KernelCounters, ACopyIsMemoryBoundNearThePeakBandwidth) {
  const auto call = derive("copy", "sol");
  ASSERT_EQ(call.kernels.size(), 1U);
  const auto& k = call.kernels[0];
  EXPECT_NEAR(*k.value("duration"), 224.576, 1e-9);
  EXPECT_NEAR(*k.value("dram_throughput"), 86.63, 1e-9); // ncu's own figure, unchanged
  EXPECT_GE(*k.value("dram_throughput"), 80.0);
  // Our bandwidth (bytes / duration) agrees with ncu's dram__bytes.sum.per_second (4168.2 GB/s).
  EXPECT_NEAR(*k.value("dram_bandwidth"), 4168.2, 5.0);
  EXPECT_EQ(text_of(k, "bottleneck"), "memory");
  EXPECT_NEAR(*k.value("sol_score"), 0.8663, 1e-6);
  // neg is one FADD per element: 120 M FLOP over 936 MB of traffic.
  EXPECT_NEAR(*k.value("arithmetic_intensity") / (120e6 / (480007168.0 + 456070656.0)), 1.0, 1e-4);
  EXPECT_EQ(text_of(k, "precision"), "fp32");
  EXPECT_NEAR(*k.value("ridge_point"), 66.9e12 / 4800e9, 1e-9);
  EXPECT_EQ(*k.value("registers_per_thread"), 32);
  EXPECT_EQ(*k.value("block_size"), 128);
  EXPECT_EQ(*k.value("grid_size"), 117188);
  EXPECT_EQ(text_of(k, "occupancy_limiter"), "registers and block size");
}

TEST(KernelCounters, AnFp16MatmulIsComputeBoundOnTheTensorPipe) {
  const auto k = derive("matmul_fp16", "sol").kernels.at(0);
  EXPECT_EQ(text_of(k, "bottleneck"), "compute");
  EXPECT_EQ(text_of(k, "dominant_pipe"), "tensor"); // not "shared", its tie on Hopper
  EXPECT_NEAR(*k.value("dominant_pipe_utilization"), 97.04, 1e-9);
  EXPECT_GE(*k.value("sol_score"), 0.95);
}

TEST(KernelCounters, AnFp32MatmulDoesItsWorkOnTheFmaPipe) {
  const auto k = derive("matmul_fp32", "sol").kernels.at(0);
  EXPECT_EQ(text_of(k, "bottleneck"), "compute");
  EXPECT_EQ(text_of(k, "precision"), "fp32");
  // 4096^3 multiply-adds: 2 * 4096^3 FLOP, counted from the FFMA instructions.
  const double flop = *k.value("fp32_flops") * *k.value("duration") * 1e-6;
  EXPECT_NEAR(flop / (2.0 * 4096 * 4096 * 4096), 1.0, 0.02);
  EXPECT_GT(*k.value("fp32_utilization"), 30.0);
}

TEST(KernelCounters, ATinyKernelIsLatencyBound) {
  const auto k = derive("tiny", "sol").kernels.at(0);
  EXPECT_EQ(text_of(k, "bottleneck"), "latency");
  EXPECT_NE(k.field("bottleneck")->detail.find("60 %"), std::string::npos);
  EXPECT_LT(*k.value("sol_score"), 0.1);
}

TEST(KernelCounters, NoFieldIsEverBlank) {
  for (const std::string kase : {"copy", "matmul_fp16", "matmul_fp32", "tiny", "two_kernels"}) {
    for (const std::string set : {"sol", "full"}) {
      const auto call = derive(kase, set);
      auto all = call.kernels;
      all.push_back(call.call);
      for (const auto& k : all) {
        ASSERT_GE(k.fields.size(), 30U);
        for (const auto& f : k.fields) {
          EXPECT_TRUE(f.value || !f.text.empty() || !f.reason.empty())
              << kase << "." << set << " " << k.name << ": " << f.id;
        }
        EXPECT_TRUE(!k.stalls.empty() || !k.stalls_reason.empty()) << kase << "." << set;
      }
    }
  }
}

TEST(KernelCounters, TheSolSetSaysWhatOnlyTheFullSetCollects) {
  const auto sol = derive("copy", "sol").kernels.at(0);
  EXPECT_TRUE(sol.stalls.empty());
  EXPECT_NE(sol.stalls_reason.find("--profile full"), std::string::npos);
  EXPECT_NE(sol.field("l2_hit_rate")->reason.find("--profile full"), std::string::npos);
  const auto full = derive("copy", "full").kernels.at(0);
  EXPECT_NEAR(*full.value("l2_hit_rate"), 52.53, 1e-9);
  EXPECT_NEAR(*full.value("global_load_sectors_per_request"), 16.0, 1e-9);
}

TEST(KernelCounters, StallSharesAreTheTopFiveAndTheRestSummingToAHundred) {
  const auto k = derive("copy", "full").kernels.at(0);
  ASSERT_EQ(k.stalls.size(), 6U);
  EXPECT_EQ(k.stalls[0].reason, "long_scoreboard");
  // 137.54 of the 170.79 stalled cycles per issue ("selected", 1, is not a stall); ncu's
  // section says "about 81 % of the total average of 171.2 cycles", which counts it.
  EXPECT_NEAR(k.stalls[0].percent, 100.0 * 137.54 / 170.79, 0.01);
  EXPECT_EQ(k.stalls.back().reason, "other");
  double sum = 0;
  for (const auto& s : k.stalls) {
    EXPECT_GE(s.percent, 0.0);
    EXPECT_LE(s.percent, 100.0);
    EXPECT_NE(s.reason, "selected");
    sum += s.percent;
  }
  EXPECT_NEAR(sum, 100.0, 1e-9);
}

TEST(KernelCounters, TheCallSumsCountsAndWeightsRatesByDuration) {
  const auto call = derive("two_kernels", "full");
  ASSERT_EQ(call.kernels.size(), 2U);
  const auto& a = call.kernels[0];
  const auto& b = call.kernels[1];
  const auto& all = call.call;
  EXPECT_NEAR(*all.value("duration"), *a.value("duration") + *b.value("duration"), 1e-9);
  EXPECT_NEAR(*all.value("dram_bytes"), *a.value("dram_bytes") + *b.value("dram_bytes"), 1e-6);
  const double wa = *a.value("duration"), wb = *b.value("duration");
  EXPECT_NEAR(*all.value("dram_throughput"),
              (*a.value("dram_throughput") * wa + *b.value("dram_throughput") * wb) / (wa + wb),
              1e-9);
  const auto& longest = wa >= wb ? a : b;
  EXPECT_EQ(*all.value("block_size"), *longest.value("block_size"));
  EXPECT_NE(all.name.find("all 2 kernels"), std::string::npos);
  double sum = 0;
  for (const auto& s : all.stalls) {
    sum += s.percent;
  }
  EXPECT_NEAR(sum, 100.0, 1e-9);
}

TEST(KernelCounters, OwnKernelsAreMarkedByName) {
  const auto report = parse_ncu_csv(fixture("two_kernels.sol.csv"));
  const auto call = derive_call(report, "sol", h200(), {"cunn_SoftMaxForwardReg"});
  EXPECT_FALSE(call.kernels[0].own);
  EXPECT_TRUE(call.kernels[1].own);
  const auto none = derive_call(report, "sol", h200(), {"SoftMax"}); // a part of a name is not it
  EXPECT_FALSE(none.kernels[1].own);
}

TEST(KernelCounters, JsonCarriesAValueOrAReasonForEveryField) {
  const auto json = to_json(derive("tiny", "sol"));
  ASSERT_EQ(json["kernels"].size(), 1U);
  for (const auto& [id, field] : json["call"]["fields"].items()) {
    EXPECT_TRUE(field.contains("unit")) << id;
    EXPECT_TRUE(!field["value"].is_null() || field.contains("reason")) << id;
  }
  EXPECT_EQ(json["call"]["fields"]["duration"]["unit"], "us");
  EXPECT_TRUE(json["call"].contains("warp_stalls_reason"));
}

TEST(NcuMetrics, SetsListTheirMetricsAndTheCommandProfilesOnlyTheMarkedSpan) {
  const auto sol = metrics_for_set("sol");
  const auto full = metrics_for_set("full");
  EXPECT_GT(full.size(), sol.size());
  EXPECT_TRUE(collected_by("gpu__time_duration.sum", "sol"));
  EXPECT_FALSE(collected_by("lts__t_sector_hit_rate.pct", "sol"));
  EXPECT_TRUE(collected_by("lts__t_sector_hit_rate.pct", "full"));
  EXPECT_THROW(metrics_for_set("everything"), std::runtime_error);
  const auto args = ncu_arguments("/usr/bin/ncu", "sol", "/tmp/x.csv");
  const std::string joined = [&] {
    std::string s;
    for (const auto& a : args) {
      s += a + " ";
    }
    return s;
  }();
  EXPECT_NE(joined.find("--profile-from-start off"), std::string::npos);
  EXPECT_NE(joined.find("--page raw"), std::string::npos);
  EXPECT_NE(joined.find("--log-file /tmp/x.csv"), std::string::npos);
}

// The reports kbench's own collector wrote on the H200 (`kbench eval --profile sol` of
// problems/level1/1_relu.py with examples/cuda/level1_relu.py, 2026-11-29).
TEST(KernelCounters, KbenchsOwnCollectorOutputParsesAndMarksTheCandidatesKernel) {
  const auto candidate = derive_call(parse_ncu_csv(fixture("relu_candidate.kbench-sol.csv")), "sol",
                                     h200(), {"relu_kernel"});
  ASSERT_EQ(candidate.kernels.size(), 1U);
  EXPECT_TRUE(candidate.kernels[0].own);
  EXPECT_EQ(text_of(candidate.call, "bottleneck"), "memory");
  EXPECT_NEAR(*candidate.call.value("dram_throughput"), 77.57, 1e-9);
  EXPECT_NEAR(*candidate.call.value("duration"), 65.888, 1e-9);
  // ReLU is a max, not floating-point arithmetic ncu counts as FLOP: no precision, no ridge.
  EXPECT_EQ(text_of(candidate.call, "precision"), "none");
  EXPECT_FALSE(candidate.call.field("ridge_point")->reason.empty());
  EXPECT_EQ(*candidate.call.value("tensor_utilization"), 0); // the fp16 tensor count is there, 0
  const auto reference =
      derive_call(parse_ncu_csv(fixture("relu_reference.kbench-sol.csv")), "sol", h200(), {});
  EXPECT_FALSE(reference.kernels.at(0).own);
  EXPECT_NEAR(*reference.call.value("dram_throughput"), 79.89, 1e-9);
}

// The summary's counter lines show the run page's fields in their units, the reason where a
// field has no value, and never a blank.
TEST(CountersSummary, ShowsTheRunPageFieldsWithUnitsOrReasons) {
  kbench::CountersInfo info;
  info.profile = "sol";
  info.tool = "/usr/local/cuda/bin/ncu";
  info.gpu = {{"row", "H200 SXM"}, {"note", ""}};
  const auto call = derive("copy", "sol");
  info.candidate.collected = true;
  info.candidate.kernels = call.kernels.size();
  info.candidate.call = to_json(call);
  info.reference.reason = "the reference did not run under Nsight Compute: boom";
  info.sol_score = call.call.value("sol_score");
  info.physical_limit_detail = "no measured device time to compare the floor with";
  info.candidate_energy.joules_per_call = 0.0376;
  info.candidate_energy.watts = 537;
  info.candidate_energy.calls = 15332;
  info.reference_energy.reason = "unsupported: NVML reports no energy counter for this GPU";
  const std::string text = kbench::report::format_counters(info);
  EXPECT_NE(text.find("bottleneck memory"), std::string::npos) << text;
  EXPECT_NE(text.find("DRAM 86.6 % (4168 GB/s)"), std::string::npos) << text;
  EXPECT_NE(text.find("32 register/thread"), std::string::npos) << text;
  EXPECT_NE(text.find("grid 117188 blocks"), std::string::npos) << text;
  EXPECT_NE(text.find("not collected by --profile sol"), std::string::npos) << text;
  EXPECT_NE(text.find("no counters: the reference did not run"), std::string::npos) << text;
  EXPECT_NE(text.find("37.6 mJ per call (537 W over 15332 calls)"), std::string::npos) << text;
  EXPECT_NE(text.find("n/a (no measured device time"), std::string::npos) << text;
  EXPECT_EQ(text.find("()"), std::string::npos) << text; // an empty reason would print as "()"
}

TEST(Disassembly, CuobjdumpListingsSplitByFunctionAndDemangle) {
  const std::string listing = "Fatbin elf code:\n================\narch = sm_90\n\n"
                              "\tcode for sm_90\n"
                              "\t\tFunction : _Z11relu_kernelPKfPflll\n"
                              "\t.headerflags\t@\"EF_CUDA_SM90\"\n"
                              "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
                              "        /*0010*/                   EXIT ;\n"
                              "\t\t..........\n\n"
                              "\t\tFunction : helper\n"
                              "        /*0000*/                   RET.REL.NODEC R20 0x0 ;\n"
                              "\t\t..........\n";
  const auto functions = kbench::parse_cuobjdump_sass(listing);
  ASSERT_EQ(functions.size(), 2U);
  EXPECT_EQ(functions[0].mangled, "_Z11relu_kernelPKfPflll");
  EXPECT_EQ(functions[0].name, "relu_kernel(float const*, float*, long, long, long)");
  EXPECT_EQ(functions[0].arch, "sm_90");
  EXPECT_NE(functions[0].sass.find("EXIT ;"), std::string::npos);
  EXPECT_EQ(functions[0].sass.find("RET.REL"), std::string::npos); // the next function's
  EXPECT_EQ(functions[1].name, "helper");                          // not mangled: kept as is
}
