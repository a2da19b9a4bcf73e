#pragma once
// A stored agent run read back (store/agent_runs.hpp), for `kbench replay` (drawn again as text,
// no model call, no GPU work) and `kbench export-trace`: JSON Lines events (`jsonl`: the run,
// every message in order, every turn's wire record and tool call, the evaluations, the end), or
// the Claude Code session lines that Hugging Face's agent-trace viewer reads (`hf`).
#include "store/agent_runs.hpp"
#include "store/store.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kbench::agent {

struct StoredTrace {
  store::AgentRunRow run;
  std::vector<store::TurnRow> turns;
};

// Throws std::runtime_error naming the store when there is no such run.
StoredTrace load_trace(store::Store& store, const std::string& id_or_prefix);

std::vector<nlohmann::json> trace_events(const StoredTrace& trace, store::Store& store);
std::vector<nlohmann::json> hf_trace_lines(const StoredTrace& trace);
std::string format_replay(const StoredTrace& trace, store::Store& store);

// The distinct kernels the run's tool calls evaluated, in first-use order: (sha256, path).
std::vector<std::pair<std::string, std::string>> evaluated_kernels(const StoredTrace& trace);

} // namespace kbench::agent
