#include "agent/agent_run.hpp"

#include "agent/prompts.hpp"
#include "core/source_files.hpp"
#include "pipeline/worker_phase.hpp"
#include "store/agent_runs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <random>

namespace kbench::agent {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Message user(std::string text) {
  return text_message("user", std::move(text));
}

nlohmann::json as_json(const std::vector<Message>& messages) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& message : messages) {
    out.push_back(to_json(message));
  }
  return out;
}

// What was sent without the conversation it carried (that is the turns' messages): the model,
// the tools, the request's other fields.
nlohmann::json sent_without_history(nlohmann::json request) {
  for (const char* history : {"messages", "input"}) {
    if (request.contains(history) && request[history].is_array()) {
      request[history] = fmt::format("({} items: the turns' messages)", request[history].size());
    }
  }
  if (request.contains("tools") && request["tools"].is_array()) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto& tool : request["tools"]) {
      names.push_back(tool.contains("function") ? tool["function"].value("name", "")
                                                : tool.value("name", ""));
    }
    request["tools"] = names;
  }
  if (request.contains("instructions")) {
    request["instructions"] = "(the system message)";
  }
  return request;
}

// The state of a run: what its stored turns add up to, or a fresh start.
struct Progress {
  std::vector<Message> messages;
  int turns = 0, tool_calls = 0;
  Usage tokens;
  double gpu_s = 0, earlier_wall_s = 0;
  std::string last_kernel, last_kernel_sha; // the last kernel that compiled
};

Progress replayed(store::AgentRuns& runs, const std::string& run_id) {
  Progress progress;
  for (const auto& turn : runs.turns(run_id)) {
    for (const char* part : {"messages_before", "messages_after"}) {
      for (const auto& message : turn.request.value(part, nlohmann::json::array())) {
        progress.messages.push_back(message_from_json(message));
      }
    }
    progress.turns = turn.turn + 1;
    progress.tool_calls += static_cast<int>(turn.calls.size());
    progress.tokens.input += turn.usage.value("input", 0LL);
    progress.tokens.cached += turn.usage.value("cached", 0LL);
    progress.tokens.output += turn.usage.value("output", 0LL);
    progress.tokens.reasoning += turn.usage.value("reasoning", 0LL);
    progress.earlier_wall_s += turn.llm_s.value_or(0) + turn.tool_s.value_or(0);
    for (const auto& outcome : turn.request.value("tool_outcomes", nlohmann::json::array())) {
      progress.gpu_s += outcome.value("gpu_s", 0.0);
      if (outcome.value("compiled", false)) {
        progress.last_kernel = outcome.value("kernel_path", "");
        progress.last_kernel_sha = outcome.value("kernel_sha256", "");
      }
    }
  }
  return progress;
}

std::string tools_sentence(const ToolBox& tools) {
  std::vector<std::string> names;
  for (const auto& spec : tools.specs()) {
    names.push_back("`" + spec.name + "`");
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

} // namespace

RunOutcome run_agent(const AgentSettings& settings, const RunRequest& request, store::Store& store,
                     EvaluationGate& gate) {
  const auto start = Clock::now();
  const Prompts prompts(settings.templates);
  store::AgentRuns runs(store);
  RunOutcome outcome;
  Progress progress;
  fs::path problem = request.problem;
  if (!request.resume_id.empty()) {
    const auto stored = runs.run(request.resume_id);
    if (!stored) {
      throw std::runtime_error(
          fmt::format("no agent run {:?} in {}", request.resume_id, store.path().string()));
    }
    if (stored->state != "running") {
      throw std::runtime_error(fmt::format("agent run {} already ended ({}); kbench replay "
                                           "shows it",
                                           stored->id, stored->state));
    }
    outcome.run_id = stored->id;
    problem = stored->problem_path;
    progress = replayed(runs, stored->id);
  }
  EvalOptions evaluation = settings.evaluation;
  evaluation.problem = problem;
  std::string error;
  const auto source = read_source_file(problem, "problem", error);
  if (!source) {
    outcome.state = "failed";
    outcome.message = error;
    return outcome;
  }
  if (outcome.run_id.empty()) {
    outcome.run_id = store::new_id();
    store::AgentRunRow row;
    row.id = outcome.run_id;
    row.problem_sha256 = source->sha256;
    row.problem_path = fs::absolute(problem).string();
    row.model = settings.endpoint.model;
    row.endpoint = settings.endpoint.url;
    row.tier = settings.tier.name;
    row.sample = request.sample;
    row.state = "running";
    row.started_at = store::utc_timestamp();
    row.config = {{"api", api_name(settings.endpoint.api)},
                  {"tier", settings.tier.name},
                  {"max_turns", settings.budgets.max_turns},
                  {"max_tool_calls", settings.budgets.max_tool_calls},
                  {"budget_wall_s", settings.budgets.wall_s},
                  {"budget_gpu_s", settings.budgets.gpu_s},
                  {"budget_tokens", settings.budgets.tokens},
                  {"show_reference", settings.show_reference},
                  {"evaluation", to_json(evaluation)}};
    runs.create(row);
  }
  ToolContext context;
  context.evaluation = evaluation;
  context.workspace = settings.runs_folder / outcome.run_id;
  context.show_reference = settings.show_reference;
  context.gate = &gate;
  context.store = &store;
  context.run_index = request.index;
  ToolBox tools(context, settings.tier.tools);
  ModelClient client(settings.endpoint);
  const Budgets& budgets = settings.budgets;
  const DeviceChoice device = choose_device(evaluation.device, evaluation.gpu);
  const std::map<std::string, std::string> values = {
      {"backend", device.device == "cpu" ? "C++ (CPU)" : "CUDA"},
      {"max_turns", std::to_string(budgets.max_turns)},
      {"max_tool_calls", std::to_string(budgets.max_tool_calls)},
      {"tools", tools_sentence(tools)},
      {"precision", evaluation.precision},
      {"tolerance", evaluation.precision == "fp32" ? "1e-4" : "1e-2"},
      {"problem_name", problem.filename().string()},
      {"reference_source", source->text},
  };

  bool submitted = false;
  std::string stop_reason;
  std::string final_kernel, final_sha;
  std::optional<EvalResult> final_result;
  for (int turn = progress.turns; turn < budgets.max_turns; ++turn) {
    const double wall = progress.earlier_wall_s + seconds_since(start);
    if (budgets.wall_s > 0 && wall >= budgets.wall_s) {
      stop_reason =
          fmt::format("wall-time budget spent ({:.0f} of {:.0f} s)", wall, budgets.wall_s);
      break;
    }
    if (budgets.gpu_s > 0 && progress.gpu_s >= budgets.gpu_s) {
      stop_reason = fmt::format("GPU-seconds budget spent ({:.1f} of {:.0f} s)", progress.gpu_s,
                                budgets.gpu_s);
      break;
    }
    if (budgets.tokens > 0 && progress.tokens.total() >= budgets.tokens) {
      stop_reason =
          fmt::format("token budget spent ({} of {})", progress.tokens.total(), budgets.tokens);
      break;
    }
    if (progress.tool_calls >= budgets.max_tool_calls) {
      stop_reason = fmt::format("tool-call budget spent ({})", budgets.max_tool_calls);
      break;
    }
    std::vector<Message> before;
    if (progress.messages.empty()) {
      std::map<std::string, std::string> task = values;
      task["output_format"] =
          prompts.render(device.device == "cpu" ? "output_cpu" : "output_cuda", values);
      before.push_back(text_message("system", prompts.render("system", values)));
      before.push_back(user(prompts.render("task", task)));
    }
    const int turns_left = budgets.max_turns - turn;
    if (turns_left == 1 && budgets.max_turns > 1) {
      before.push_back(user(prompts.render("final_turn", values)));
    } else if (turns_left == 3) {
      auto status = values;
      status["turns_left"] = std::to_string(turns_left);
      status["tool_calls_left"] = std::to_string(budgets.max_tool_calls - progress.tool_calls);
      before.push_back(user(prompts.render("warning", status)));
    }
    progress.messages.insert(progress.messages.end(), before.begin(), before.end());
    store::TurnRow row;
    row.turn = turn;
    row.started_at = store::utc_timestamp();
    row.request = {{"api", api_name(settings.endpoint.api)},
                   {"url", client.url()},
                   {"model", settings.endpoint.model},
                   {"messages_before", as_json(before)}};
    ModelReply reply;
    try {
      reply = client.complete(progress.messages, tools.specs());
    } catch (const ModelError& failed) {
      // The turn is kept (what was sent), so a resume after fixing the server goes on from here.
      progress.messages.resize(progress.messages.size() - before.size());
      outcome.state = "model_error";
      outcome.message = fmt::format("turn {}: {}", turn, failed.what());
      stop_reason = outcome.message;
      break;
    }
    std::vector<Message> after = {reply.message};
    progress.messages.push_back(reply.message);
    nlohmann::json outcomes = nlohmann::json::array();
    double tool_s = 0;
    for (std::size_t k = 0; k < reply.message.tool_calls.size(); ++k) {
      const ToolCall& call = reply.message.tool_calls[k];
      Message result;
      result.role = "tool";
      result.tool_call_id = call.id;
      result.tool_name = call.name;
      store::ToolCallRow record{static_cast<int>(k), call.id, call.name, call.arguments, "",
                                std::nullopt,        "",      ""};
      if (submitted) {
        result.content = "not run: the kernel was submitted, and the session is over.";
      } else if (progress.tool_calls >= budgets.max_tool_calls) {
        result.content = fmt::format("not run: the {} tool calls of this session are spent.",
                                     budgets.max_tool_calls);
      } else {
        ToolOutcome done = tools.call(call);
        ++progress.tool_calls;
        progress.gpu_s += done.gpu_seconds;
        tool_s += done.seconds;
        result.content = done.text;
        record.seconds = done.seconds;
        record.kernel_sha256 = done.kernel_sha256;
        record.evaluation_id = done.evaluation_id;
        if (done.compiled) {
          progress.last_kernel = done.kernel_path;
          progress.last_kernel_sha = done.kernel_sha256;
        }
        if (done.submitted) {
          submitted = true;
          final_kernel = done.kernel_path;
          final_sha = done.kernel_sha256;
          outcome.final_evaluation_id = done.evaluation_id;
          final_result = done.result;
        }
        outcomes.push_back({{"call_id", call.id},
                            {"ok", done.ok},
                            {"compiled", done.compiled},
                            {"submitted", done.submitted},
                            {"gpu_s", done.gpu_seconds},
                            {"kernel_path", done.kernel_path},
                            {"kernel_sha256", done.kernel_sha256}});
      }
      record.result = result.content;
      row.calls.push_back(record);
      after.push_back(result);
      progress.messages.push_back(result);
    }
    if (reply.message.tool_calls.empty() && !submitted && turn + 1 < budgets.max_turns) {
      after.push_back(user(prompts.render("reminder", values)));
      progress.messages.push_back(after.back());
    }
    progress.tokens.input += reply.usage.input;
    progress.tokens.cached += reply.usage.cached;
    progress.tokens.output += reply.usage.output;
    progress.tokens.reasoning += reply.usage.reasoning;
    row.request["messages_after"] = as_json(after);
    row.request["sent"] = sent_without_history(reply.request);
    row.request["retried"] = reply.retried;
    row.request["attempts"] = reply.attempts;
    row.request["tool_outcomes"] = outcomes;
    row.response = reply.raw;
    row.reasoning = reply.message.reasoning;
    row.usage = to_json(reply.usage);
    row.truncated = reply.truncated;
    row.llm_s = reply.total_s;
    row.tool_s = tool_s;
    runs.add_turn(outcome.run_id, row);
    progress.turns = turn + 1;
    if (submitted) {
      break;
    }
  }
  if (stop_reason.empty() && !submitted) {
    stop_reason = fmt::format("the {} turns are over without a submission", budgets.max_turns);
  }

  nlohmann::json summary;
  if (submitted) {
    outcome.state = "submitted";
    if (final_result && final_result->status == Status::ok) {
      std::mt19937_64 random{std::random_device{}()};
      const std::uint64_t seed = random() >> 1;
      const ToolOutcome check = tools.held_out_check(final_kernel, final_sha, seed);
      summary["held_out"] = {{"seed", seed},
                             {"evaluation_id", check.evaluation_id},
                             {"status", check.result ? status_name(check.result->status) : ""},
                             {"message", check.result ? check.result->message : check.text}};
    }
  } else {
    if (outcome.state.empty()) {
      outcome.state = "not_submitted";
    }
    if (!progress.last_kernel.empty()) { // what the run had when it stopped, marked not submitted
      const ToolOutcome last = tools.evaluate_final(progress.last_kernel, progress.last_kernel_sha);
      outcome.final_evaluation_id = last.evaluation_id;
      final_result = last.result;
      progress.gpu_s += last.gpu_seconds;
    }
  }
  outcome.final_status = final_result ? status_name(final_result->status) : "";
  outcome.turns = progress.turns;
  outcome.tool_calls = progress.tool_calls;
  outcome.tokens = progress.tokens;
  outcome.gpu_s = progress.gpu_s;
  outcome.wall_s = progress.earlier_wall_s + seconds_since(start);
  if (outcome.message.empty()) {
    outcome.message = submitted ? "submitted" : stop_reason;
  }
  summary["turns"] = outcome.turns;
  summary["tool_calls"] = outcome.tool_calls;
  summary["tokens"] = to_json(outcome.tokens);
  summary["wall_s"] = outcome.wall_s;
  summary["gpu_s"] = outcome.gpu_s;
  summary["stop_reason"] = submitted ? "submitted" : stop_reason;
  summary["final_status"] = outcome.final_status;
  runs.finish(outcome.run_id, outcome.state, outcome.final_evaluation_id, submitted, summary);
  return outcome;
}

} // namespace kbench::agent
