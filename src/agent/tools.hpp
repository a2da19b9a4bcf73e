#pragma once
// The agent's tools (docs/agent.md): compile_kernel, run_correctness, static_check,
// get_gpu_specs, profile_kernel, disassemble_kernel and submit_kernel, each with a JSON schema
// and a short text result in the seed run page's style. The kernel arrives as `kernel_code`,
// the whole candidate file, which is written by its sha256 into the run's folder and evaluated
// by the engine; every evaluation is stored, and the call records the kernel's sha256 and the
// evaluation's id. The model's arguments are untrusted: malformed JSON, a missing field, an
// unknown tool, a kernel that crashes or hangs all come back as a result it can read.
#include "agent/conversation.hpp"
#include "agent/evaluation_gate.hpp"
#include "core/options.hpp"
#include "core/result.hpp"
#include "store/store.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kbench::agent {

struct Tier {
  std::string name; // single, default, all
  int max_turns = 10;
  int max_tool_calls = 30;
  std::vector<std::string> tools;
};
// The three tiers (PopcornBench's): single (1 turn, 1 call, submit only), default (10, 30:
// compile, correctness, static check, GPU specs, submit), all (15, 50: adds profile and
// disassemble). Throws std::invalid_argument naming the choices for another name.
Tier tier_named(const std::string& name);

// Every tool's schema, in the order they are offered.
const std::vector<ToolSpec>& all_tool_specs();

struct ToolContext {
  EvalOptions evaluation;          // problem, device, variant, precision, trials, rules, ...
  std::filesystem::path workspace; // the run's folder: kernels are written here
  bool show_reference = false; // show the reference's time and the speedup (off: as PopcornBench)
  EvaluationGate* gate = nullptr;
  store::Store* store = nullptr;
  int run_index = 0; // which GPU of the gate's the run uses
};

struct ToolOutcome {
  std::string text; // what the model reads
  bool ok = false;  // the call did what was asked (a failing kernel is ok == false)
  std::string kernel_sha256, kernel_path, evaluation_id;
  double seconds = 0;
  double gpu_seconds = 0; // device time held for trials and timing (0 on the CPU)
  bool submitted = false;
  bool compiled = false; // the kernel built (a candidate for the final evaluation)
  std::optional<EvalResult> result;
};

class ToolBox {
public:
  ToolBox(ToolContext context, const std::vector<std::string>& tools);
  const std::vector<ToolSpec>& specs() const { return m_specs; }
  ToolOutcome call(const ToolCall& call);
  // The full evaluation of an earlier kernel file (a run out of budget: its last compiled
  // kernel), stored; not offered to the model.
  ToolOutcome evaluate_final(const std::filesystem::path& kernel, const std::string& sha256);
  // A correctness check of `kernel` on a seed the model never saw, stored (the held-out
  // re-check after a submission).
  ToolOutcome held_out_check(const std::filesystem::path& kernel, const std::string& sha256,
                             std::uint64_t seed);

private:
  ToolOutcome run(const std::string& tool, const std::string& code);
  ToolOutcome evaluated(const std::string& tool, EvalOptions options,
                        const std::filesystem::path& kernel, const std::string& sha256);

  ToolContext m_context;
  std::vector<ToolSpec> m_specs;
};

// The texts (agent/tool_texts.cpp), apart so that tests read them without evaluating.
std::string compile_text(const EvalResult& result);
std::string correctness_text(const std::string& tool, const EvalResult& result);
std::string timing_text(const std::string& tool, const EvalResult& result, bool show_reference);
std::string static_check_text(const std::vector<StaticVerdict>& verdicts);

} // namespace kbench::agent
