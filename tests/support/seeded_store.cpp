#include "seeded_store.hpp"

#include "core/sha256.hpp"
#include "store/agent_runs.hpp"

#include <fmt/format.h>

#include <fstream>

namespace kbench::testing {
namespace fs = std::filesystem;

namespace {

EvalResult result_for(const std::string& problem, const std::string& status, double speedup) {
  EvalResult r;
  r.status = *status_from_name(status);
  r.message = status == "ok" ? "" : "the timed calls caused no GPU work";
  std::ifstream in(problem);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  r.problem_path = problem;
  r.problem_sha256 = sha256_hex(text);
  r.candidate_path = "/runs/candidate.py";
  r.candidate_sha256 = sha256_hex(problem + status + std::to_string(speedup));
  r.device = "cuda:0";
  r.device_name = "NVIDIA H200";
  r.variant = "standard";
  r.torch_version = "2.11.0+cu130";
  r.started_at = "2026-12-02T10:00:00Z";
  for (int t = 0; t < 5; ++t) {
    TrialResult trial;
    trial.index = t;
    trial.passed = status == "ok";
    r.trials.push_back(trial);
  }
  if (status == "ok" || status == "impossible_timing") {
    auto& timing = r.timing;
    timing.measured = true;
    timing.speedup = speedup;
    timing.speedup_ci = Interval{speedup * 0.97, speedup * 1.03};
    TimingSide side;
    side.method = "cupti";
    side.l2_flush = true;
    side.stats_us = {1000, 50.0, 50.3, 0.5, 48.9, 53.1, 49.4, 51.2, 0.01};
    side.launches_per_call = 4;
    side.peak_memory_bytes = 33000000;
    timing.reference = side;
    const auto reference_stats = side.stats_us;
    for (double SampleStats::*field :
         {&SampleStats::median, &SampleStats::mean, &SampleStats::std, &SampleStats::min,
          &SampleStats::max, &SampleStats::p10, &SampleStats::p90}) {
      side.stats_us.*field = reference_stats.*field / speedup;
    }
    side.launches_per_call = 1;
    side.kernels_per_call = {{"relu_kernel", 1}};
    side.own_kernel_share = 1.0;
    timing.candidate = side;
    timing.fusion_ratio = 4;
    timing.memory_ratio = 1;
    timing.checked_calls = 1000;
    CountersInfo counters;
    counters.profile = "sol";
    counters.gpu = {{"row", "H200 SXM"},
                    {"dram_bandwidth_gbs", {{"value", 4800.0}, {"source", "table"}}},
                    {"dense_tflops", {{"fp32", {{"value", 67.0}, {"source", "table"}}}}}};
    counters.candidate.collected = true;
    counters.candidate.kernels = 1;
    const nlohmann::json kernel = {
        {"name", "relu_kernel"},
        {"own", true},
        {"fields",
         {{"dram_bandwidth", {{"value", 3100.0}, {"unit", "GB/s"}}},
          {"arithmetic_intensity", {{"value", 0.125}, {"unit", "FLOP/B"}}},
          {"bottleneck", {{"value", "memory"}, {"unit", ""}}},
          {"achieved_occupancy", {{"value", 81.5}, {"unit", "%"}}}}},
        {"warp_stalls",
         {{{"reason", "long_scoreboard"}, {"percent", 61.0}},
          {{"reason", "other"}, {"percent", 39.0}}}}};
    counters.candidate.call = {{"kernels", {kernel}}, {"call", kernel}};
    counters.reference.reason = "not profiled in this seed";
    counters.sol_score = 0.65;
    r.counters = counters;
  }
  return r;
}

std::string add_run(store::Store& store, store::AgentRuns& runs, const std::string& problem,
                    const std::string& model, int sample, const std::string& status, double speedup,
                    int turns, const std::string& state = "submitted",
                    const std::string& text = "") {
  const EvalResult final = result_for(problem, status, speedup);
  const std::string evaluation = store.add_evaluation(final, "key-" + store::new_id(), "agent");
  store::AgentRunRow run;
  run.id = store::new_id();
  run.problem_sha256 = final.problem_sha256;
  run.problem_path = problem;
  run.model = model;
  run.endpoint = "http://127.0.0.1:8000";
  run.tier = "default";
  run.sample = sample;
  run.state = "running";
  run.started_at = fmt::format("2026-12-02T10:{:02d}:00.000Z", sample);
  run.config = {{"max_turns", std::max(10, turns)},
                {"max_tool_calls", 30},
                {"evaluation", {{"device", "cuda"}, {"precision", "fp32"}}}};
  runs.create(run);
  const std::string code =
      "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n# " + text + "\n";
  for (int t = 0; t < turns; ++t) {
    store::TurnRow turn;
    turn.turn = t;
    turn.started_at = run.started_at;
    turn.llm_s = 2.5;
    turn.tool_s = 1.5;
    turn.reasoning = fmt::format("turn {} reasoning {}", t, text);
    turn.usage = {{"input", 1000}, {"output", 200}, {"cached", 0}, {"reasoning", 50}};
    turn.request = {
        {"messages_after", {{{"role", "assistant"}, {"content", "I will try this. " + text}}}}};
    store::ToolCallRow call;
    call.call_index = 0;
    call.call_id = fmt::format("call_{}", t);
    // Every third turn profiles its kernel: the run page's runtime-by-turn chart has points.
    const bool profiled = t + 1 < turns && t % 3 == 1;
    call.tool = t + 1 == turns ? "submit_kernel" : profiled ? "profile_kernel" : "compile_kernel";
    call.arguments =
        nlohmann::json{{"kernel_code", code + fmt::format("# version {}\n", t)}}.dump();
    call.result = "compile_kernel: compiled (1.2 s). " + text;
    call.seconds = 1.5;
    call.kernel_sha256 = sha256_hex(code + std::to_string(t));
    call.evaluation_id = t + 1 == turns ? evaluation : "";
    if (profiled && status == "ok") {
      const double progress = speedup * (0.4 + 0.6 * t / std::max(1, turns - 1));
      call.evaluation_id = store.add_evaluation(result_for(problem, "ok", progress),
                                                "key-" + store::new_id(), "agent");
    }
    turn.calls.push_back(call);
    runs.add_turn(run.id, turn);
  }
  if (state != "running") {
    runs.finish(run.id, state, evaluation, state == "submitted",
                {{"turns", turns},
                 {"tool_calls", turns},
                 {"tokens", {{"input", 1000 * turns}, {"output", 200 * turns}}},
                 {"wall_s", 60.0},
                 {"gpu_s", 8.5},
                 {"stop_reason", "submitted"},
                 {"held_out", {{"status", "ok"}, {"seed", 7}}}});
  }
  return run.id;
}

} // namespace

Seeded seed_store(store::Store& store, const fs::path& folder, int long_turns,
                  int extra_evaluations, int extra_runs) {
  Seeded seeded;
  store::AgentRuns runs(store);
  std::vector<std::string> problems;
  for (const char* name : {"level1/1_relu.py", "level1/2_gelu.py", "level2/1_linear_relu.py"}) {
    const fs::path file = folder / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "import torch\nclass Model(torch.nn.Module):\n    pass  # " << name
                        << "\n";
    problems.push_back(file.string());
  }
  const double speedups[2][3] = {{1.8, 0.9, 2.5}, {1.2, 1.1, 3.0}};
  for (int m = 0; m < 2; ++m) {
    for (std::size_t p = 0; p < problems.size(); ++p) {
      for (int sample = 0; sample < 2; ++sample) {
        const std::string status = (m == 1 && p == 1 && sample == 0) ? "incorrect" : "ok";
        seeded.run_ids.push_back(add_run(store, runs, problems[p], m == 0 ? "model-a" : "model-b",
                                         sample, status, speedups[m][p] * (1 + 0.05 * sample), 3));
      }
    }
  }
  seeded.hostile_run = add_run(store, runs, problems[0], "model-" + kHostile, 0, "ok", 1.5, 2,
                               "submitted", kHostile);
  seeded.excluded_run = add_run(store, runs, problems[1], "model-a", 5, "impossible_timing", 50, 2);
  seeded.running_run = add_run(store, runs, problems[2], "model-b", 9, "ok", 1.0, 1, "running");
  if (long_turns > 0) {
    seeded.long_run = add_run(store, runs, problems[2], "model-a", 7, "ok", 2.0, long_turns);
  }
  for (int i = 0; i < extra_runs; ++i) {
    add_run(store, runs, problems[static_cast<std::size_t>(i) % problems.size()],
            fmt::format("bench-model-{}", i % 5), i / 15, i % 7 == 0 ? "incorrect" : "ok",
            0.5 + (i % 11) * 0.3, 3);
  }
  for (int i = 0; i < extra_evaluations; ++i) {
    store.add_evaluation(result_for(problems[static_cast<std::size_t>(i) % problems.size()],
                                    i % 9 == 0 ? "incorrect" : "ok", 0.5 + (i % 13) * 0.2),
                         fmt::format("bench-{}", i), "suite");
  }
  const auto first = runs.run(seeded.run_ids.front());
  seeded.evaluation_id = first->final_evaluation_id;
  seeded.problem_sha256 = first->problem_sha256;
  return seeded;
}

} // namespace kbench::testing
