#include "agent/trace.hpp"

#include "core/result.hpp"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

namespace kbench::agent {
namespace {

std::string shortened(const std::string& text, std::size_t limit) {
  return text.size() > limit
             ? text.substr(0, limit) + fmt::format(" ... ({} characters)", text.size())
             : text;
}

// Each turn's messages, in conversation order.
std::vector<nlohmann::json> messages_of(const store::TurnRow& turn) {
  std::vector<nlohmann::json> out;
  for (const char* part : {"messages_before", "messages_after"}) {
    for (const auto& message : turn.request.value(part, nlohmann::json::array())) {
      out.push_back(message);
    }
  }
  return out;
}

nlohmann::json run_json(const store::AgentRunRow& run) {
  return {{"id", run.id},
          {"problem_path", run.problem_path},
          {"problem_sha256", run.problem_sha256},
          {"model", run.model},
          {"endpoint", run.endpoint},
          {"tier", run.tier},
          {"sample", run.sample},
          {"state", run.state},
          {"started_at", run.started_at},
          {"finished_at", run.finished_at},
          {"submitted", run.submitted},
          {"final_evaluation_id", run.final_evaluation_id},
          {"config", run.config},
          {"summary", run.summary}};
}

} // namespace

StoredTrace load_trace(store::Store& store, const std::string& id_or_prefix) {
  store::AgentRuns runs(store);
  const auto run = runs.run(id_or_prefix);
  if (!run) {
    throw std::runtime_error(fmt::format("no agent run {:?} in {} (kbench agent stores them)",
                                         id_or_prefix, store.path().string()));
  }
  return {*run, runs.turns(run->id)};
}

std::vector<nlohmann::json> trace_events(const StoredTrace& trace, store::Store& store) {
  std::vector<nlohmann::json> events;
  events.push_back({{"event", "run"}, {"run", run_json(trace.run)}});
  std::set<std::string> evaluations;
  for (const auto& turn : trace.turns) {
    for (const auto& message : messages_of(turn)) {
      events.push_back({{"event", "message"}, {"turn", turn.turn}, {"message", message}});
    }
    events.push_back({{"event", "turn"},
                      {"turn", turn.turn},
                      {"started_at", turn.started_at},
                      {"llm_s", turn.llm_s ? nlohmann::json(*turn.llm_s) : nlohmann::json()},
                      {"tool_s", turn.tool_s ? nlohmann::json(*turn.tool_s) : nlohmann::json()},
                      {"usage", turn.usage},
                      {"truncated", turn.truncated},
                      {"sent", turn.request.value("sent", nlohmann::json())},
                      {"retried", turn.request.value("retried", nlohmann::json::array())},
                      {"response", turn.response}});
    for (const auto& call : turn.calls) {
      events.push_back(
          {{"event", "tool_call"},
           {"turn", turn.turn},
           {"call_id", call.call_id},
           {"tool", call.tool},
           {"arguments", call.arguments},
           {"result", call.result},
           {"seconds", call.seconds ? nlohmann::json(*call.seconds) : nlohmann::json()},
           {"kernel_sha256", call.kernel_sha256},
           {"evaluation_id", call.evaluation_id}});
      if (!call.evaluation_id.empty()) {
        evaluations.insert(call.evaluation_id);
      }
    }
  }
  if (!trace.run.final_evaluation_id.empty()) {
    evaluations.insert(trace.run.final_evaluation_id);
  }
  for (const auto& id : evaluations) {
    if (const auto stored = store.find_evaluation(id)) {
      events.push_back({{"event", "evaluation"}, {"id", id}, {"result", stored->document}});
    }
  }
  events.push_back({{"event", "end"},
                    {"state", trace.run.state},
                    {"submitted", trace.run.submitted},
                    {"summary", trace.run.summary}});
  return events;
}

std::vector<nlohmann::json> hf_trace_lines(const StoredTrace& trace) {
  std::vector<nlohmann::json> lines;
  std::string parent;
  auto add = [&](const std::string& type, nlohmann::json message, const std::string& at) {
    const std::string uuid = fmt::format("{}-{}", trace.run.id, lines.size());
    lines.push_back({{"type", type},
                     {"uuid", uuid},
                     {"parentUuid", parent.empty() ? nlohmann::json() : nlohmann::json(parent)},
                     {"sessionId", trace.run.id},
                     {"timestamp", at},
                     {"message", std::move(message)}});
    parent = uuid;
  };
  for (const auto& turn : trace.turns) {
    for (const auto& message : messages_of(turn)) {
      const std::string role = message.value("role", "");
      if (role == "assistant") {
        nlohmann::json content = nlohmann::json::array();
        if (!message.value("reasoning", "").empty()) {
          content.push_back({{"type", "thinking"}, {"thinking", message["reasoning"]}});
        }
        if (!message.value("content", "").empty()) {
          content.push_back({{"type", "text"}, {"text", message["content"]}});
        }
        for (const auto& call : message.value("tool_calls", nlohmann::json::array())) {
          const auto input = nlohmann::json::parse(call.value("arguments", ""), nullptr, false);
          content.push_back(
              {{"type", "tool_use"},
               {"id", call.value("id", "")},
               {"name", call.value("name", "")},
               {"input",
                input.is_discarded() ? nlohmann::json(call.value("arguments", "")) : input}});
        }
        add("assistant", {{"role", "assistant"}, {"model", trace.run.model}, {"content", content}},
            turn.started_at);
      } else if (role == "tool") {
        add("user",
            {{"role", "user"},
             {"content", nlohmann::json::array({{{"type", "tool_result"},
                                                 {"tool_use_id", message.value("tool_call_id", "")},
                                                 {"content", message.value("content", "")}}})}},
            turn.started_at);
      } else {
        add(role == "system" ? "system" : "user",
            {{"role", role}, {"content", message.value("content", "")}}, turn.started_at);
      }
    }
  }
  return lines;
}

std::string format_replay(const StoredTrace& trace, store::Store& store) {
  const auto& run = trace.run;
  std::string out = fmt::format(
      "run         {} ({}, {})\nproblem     {}\nmodel       {} at {} (tier {}, sample {})\n"
      "started     {}{}\n",
      run.id, run.state, run.submitted ? "submitted" : "not submitted", run.problem_path, run.model,
      run.endpoint, run.tier, run.sample, run.started_at,
      run.finished_at.empty() ? "" : ", ended " + run.finished_at);
  for (const auto& turn : trace.turns) {
    out += fmt::format("\n== turn {} · {} tool call(s) · LLM {:.1f} s · tools {:.1f} s · tokens "
                       "in {} out {}{}\n",
                       turn.turn, turn.calls.size(), turn.llm_s.value_or(0),
                       turn.tool_s.value_or(0), turn.usage.value("input", 0),
                       turn.usage.value("output", 0), turn.truncated ? " · TRUNCATED" : "");
    bool task_seen = turn.turn > 0;
    for (const auto& message : messages_of(turn)) {
      const std::string role = message.value("role", "");
      if (role == "system" || (role == "user" && !task_seen)) {
        task_seen = task_seen || role == "user";
        continue; // the prompts: templates/agent/
      }
      if (!message.value("reasoning", "").empty()) {
        out += "reasoning:  " + shortened(message["reasoning"], 600) + "\n";
      }
      if (!message.value("content", "").empty() && role != "tool") {
        out += fmt::format("{}: {}\n", role, shortened(message["content"], 600));
      }
    }
    for (const auto& call : turn.calls) {
      out += fmt::format("call {} ({:.1f} s){}\n  -> {}\n", call.tool, call.seconds.value_or(0),
                         call.evaluation_id.empty() ? "" : " evaluation " + call.evaluation_id,
                         shortened(call.result, 400));
    }
  }
  if (!run.final_evaluation_id.empty()) {
    if (const auto stored = store.find_evaluation(run.final_evaluation_id)) {
      out += fmt::format("\nfinal       {} ({}{}) evaluation {}\n", stored->row.status,
                         run.submitted ? "submitted" : "not submitted: the last compiled kernel",
                         stored->row.candidate_median_us
                             ? fmt::format(", {:.2f} µs", *stored->row.candidate_median_us)
                             : "",
                         run.final_evaluation_id);
    }
  }
  if (run.summary.contains("held_out")) {
    out += fmt::format("held out    {} (seed {})\n", run.summary["held_out"].value("status", ""),
                       run.summary["held_out"].value("seed", 0ULL));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> evaluated_kernels(const StoredTrace& trace) {
  std::vector<std::pair<std::string, std::string>> kernels;
  std::set<std::string> seen;
  for (const auto& turn : trace.turns) {
    for (const auto& outcome : turn.request.value("tool_outcomes", nlohmann::json::array())) {
      const std::string sha = outcome.value("kernel_sha256", "");
      if (!sha.empty() && seen.insert(sha).second) {
        kernels.emplace_back(sha, outcome.value("kernel_path", ""));
      }
    }
  }
  return kernels;
}

} // namespace kbench::agent
