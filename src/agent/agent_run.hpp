#pragma once
// One agent run (docs/agent.md): a model server is given the reference program and calls the
// tools (agent/tools.hpp) over turns, within its tier's turns and tool calls and the budgets of
// wall time, GPU-seconds and tokens, until it submits. A turn without a tool call gets a
// reminder; two turns before the end the model is warned, and on the last it is told to
// submit. A run out of budget has its last compiled kernel evaluated, marked as not submitted.
// A submitted kernel that passes is checked once more on a seed the model never saw, without
// telling it. Every turn is stored as the wire saw it as soon as it ends (store/agent_runs.hpp),
// so a killed run resumes losing at most the turn in flight.
#include "agent/conversation.hpp"
#include "agent/evaluation_gate.hpp"
#include "agent/model_client.hpp"
#include "agent/tools.hpp"
#include "core/options.hpp"
#include "store/store.hpp"

#include <filesystem>
#include <string>

namespace kbench::agent {

struct Budgets {
  int max_turns = 10;
  int max_tool_calls = 30;
  double wall_s = 0;    // 0: none
  double gpu_s = 0;     // 0: none; device time its evaluations held for trials and timing
  long long tokens = 0; // 0: none; input + output, over every turn
};

struct AgentSettings {
  Endpoint endpoint;
  Tier tier;
  Budgets budgets;
  EvalOptions evaluation;            // device, variant, precision, trials, rules, python, cache
  bool show_reference = false;       // the tools show the reference's time and the speedup
  std::filesystem::path templates;   // overrides of templates/agent/ (empty: none)
  std::filesystem::path runs_folder; // each run's kernels go to <runs_folder>/<run id>/
};

struct RunRequest {
  std::filesystem::path problem;
  int sample = 0;        // which of --samples
  int index = 0;         // the run's place in the batch: which GPU of the gate's it uses
  std::string resume_id; // non-empty: continue this stored run
};

struct RunOutcome {
  std::string run_id;
  std::string state; // submitted, not_submitted, model_error, failed
  std::string message;
  std::string final_evaluation_id;
  std::string final_status; // the final evaluation's status, "" when none
  int turns = 0, tool_calls = 0;
  Usage tokens;
  double wall_s = 0, gpu_s = 0;
};

// Never throws for the model's or the candidate's failures: they end the run with a state and
// a message. Throws store::StoreError when the store cannot be written, and std::runtime_error
// for a run that cannot be resumed (unknown, or already finished).
RunOutcome run_agent(const AgentSettings& settings, const RunRequest& request, store::Store& store,
                     EvaluationGate& gate);

} // namespace kbench::agent
