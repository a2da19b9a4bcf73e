// An agent run's page: the seed's run page made right. The header (problem, level, variant,
// model, turns, tool calls, tokens, wall clock, backend and precision, runtimes, speedup with
// its interval, start), the final evaluation's sections, the runtime measured turn by turn,
// every turn (time split, reasoning folded, tool calls with arguments and results), the final
// kernel, and the diff between consecutive kernel versions. A run still in progress reloads.
#include "store/agent_runs.hpp"
#include "web/charts.hpp"
#include "web/pages.hpp"
#include "web/text_diff.hpp"

#include <fmt/format.h>

#include <set>

namespace kbench::web {
namespace {

std::string kernel_code_of(const std::string& arguments) {
  const auto parsed = nlohmann::json::parse(arguments, nullptr, false);
  return parsed.is_object() && parsed.contains("kernel_code") && parsed["kernel_code"].is_string()
             ? parsed["kernel_code"].get<std::string>()
             : std::string();
}

std::string diff_html(const std::string& before, const std::string& after) {
  std::string html = "<pre class=\"diff-view\">";
  for (const auto& line : line_diff(before, after)) {
    const char* css = line.kind == '+' ? "add" : line.kind == '-' ? "del" : "";
    html += fmt::format("<span class=\"{}\">{} {}</span>\n", css,
                        line.kind == '@' ? ' ' : line.kind, escape(line.text));
  }
  return html + "</pre>";
}

// One header cell; `value` is HTML already. A number links to the document it came from.
std::string cell(const std::string& key, const std::string& value, const std::string& href = {}) {
  if (href.empty()) {
    return fmt::format("<div><span class=\"k\">{}</span>{}</div>", escape(key), value);
  }
  return fmt::format("<div><span class=\"k\">{}</span><a href=\"{}\">{}</a></div>", escape(key),
                     attr(href), value);
}

} // namespace

PageBody run_page(store::Store& store, const std::string& id, const Links& links) {
  store::AgentRuns runs(store);
  const auto run = runs.run(id);
  if (!run) {
    return {"no such run", "<h1>No run " + escape(id) + "</h1>", 0, 404};
  }
  const auto turns = runs.turns(run->id);
  const auto final = run->final_evaluation_id.empty()
                         ? std::nullopt
                         : store.find_evaluation(run->final_evaluation_id);
  std::optional<EvalResult> result;
  if (final) {
    if (auto decoded = result_from_json(final->document); decoded.value) {
      result = std::move(*decoded.value);
    }
  }
  const auto& summary = run->summary;
  const auto& config = run->config;
  const auto tokens = summary.value("tokens", nlohmann::json::object());
  const auto options = config.value("evaluation", nlohmann::json::object());
  const std::string problem_name = std::filesystem::path(run->problem_path).filename().string();
  const int level = level_of(run->problem_path);
  const std::string raw_run = links.raw_run(run->id);
  const std::string raw_final = final ? links.raw_evaluation(final->row.id) : std::string();

  std::string html =
      fmt::format("<h1>{}{} · {}</h1><p class=\"muted\">run {} · <a href=\"{}\">raw run</a> · <a "
                  "href=\"{}\">problem page</a></p>",
                  level > 0 ? fmt::format("L{} ", level) : "", escape(problem_name),
                  escape(options.value("variant", "standard")), escape(run->id),
                  attr(links.raw_run(run->id)), attr(links.to("problems", run->problem_sha256)));
  html += "<section><div class=\"grid\">";
  html += cell("state", status_badge(run->state == "submitted" ? "ok" : run->state) +
                            (run->submitted ? "" : " (not submitted)"));
  html += cell("final status", status_badge(result ? status_name(result->status) : ""));
  html += cell("model", escape(run->model));
  html += cell("endpoint", escape(run->endpoint));
  html += cell("tier", escape(run->tier));
  html += cell("turns / max",
               fmt::format("{} / {}", summary.value("turns", static_cast<int>(turns.size())),
                           config.value("max_turns", 0)),
               raw_run);
  html += cell(
      "tool calls / max",
      fmt::format("{} / {}", summary.value("tool_calls", 0), config.value("max_tool_calls", 0)),
      raw_run);
  html += cell("tokens (in / out)",
               fmt::format("{} / {} (cached {}, reasoning {})", tokens.value("input", 0LL),
                           tokens.value("output", 0LL), tokens.value("cached", 0LL),
                           tokens.value("reasoning", 0LL)),
               raw_run);
  html += cell("wall clock",
               figure(summary.contains("wall_s") ? std::optional(summary.value("wall_s", 0.0))
                                                 : std::nullopt,
                      "s", 1),
               raw_run);
  html += cell("GPU time", figure(summary.value("gpu_s", 0.0), "s", 1), raw_run);
  html += cell("backend · precision",
               escape(options.value("device", "auto") + " " + options.value("precision", "fp32")));
  if (result) {
    const auto& t = result->timing;
    html +=
        cell("runtime",
             microseconds(t.candidate ? std::optional(t.candidate->stats_us.median) : std::nullopt),
             raw_final);
    html +=
        cell("reference runtime",
             microseconds(t.reference ? std::optional(t.reference->stats_us.median) : std::nullopt),
             raw_final);
    html += cell("speedup",
                 t.speedup && t.speedup_ci ? fmt::format("{:.2f}x [{:.2f}, {:.2f}]", *t.speedup,
                                                         t.speedup_ci->low, t.speedup_ci->high)
                                           : figure(t.speedup, "x"),
                 raw_final);
  }
  html += cell("started", escape(run->started_at));
  if (summary.contains("held_out")) {
    html += cell("held-out re-check",
                 status_badge(summary["held_out"].value("status", "")) +
                     fmt::format(" (seed {})", summary["held_out"].value("seed", 0ULL)));
  }
  html += cell("stopped",
               escape(summary.value("stop_reason", run->state == "running" ? "running" : "")));
  html += "</div></section>";

  // Runtime turn by turn: the timed evaluations the tools made, and the final one.
  std::vector<TurnPoint> points;
  std::vector<std::pair<int, std::string>> kernels; // (turn, code) in order, distinct
  std::set<std::string> seen_kernels;
  for (const auto& turn : turns) {
    for (const auto& call : turn.calls) {
      if (!call.evaluation_id.empty()) {
        if (const auto evaluated = store.find_evaluation(call.evaluation_id);
            evaluated && evaluated->row.candidate_median_us) {
          points.push_back({turn.turn, *evaluated->row.candidate_median_us});
        }
      }
      const std::string code = kernel_code_of(call.arguments);
      if (!code.empty() &&
          seen_kernels.insert(call.kernel_sha256.empty() ? code : call.kernel_sha256).second) {
        kernels.emplace_back(turn.turn, code);
      }
    }
  }
  if (!points.empty()) {
    html += "<section><h2>Runtime turn by turn</h2>" + runtime_by_turn(points) + "</section>";
  }
  if (final) {
    html += fmt::format("<h2>Final evaluation <a class=\"muted\" href=\"{}\">{}</a></h2>",
                        attr(links.to("evaluations", final->row.id)), escape(final->row.id));
    html += evaluation_sections(store, *final, links);
  }

  html += "<h2>Turns</h2>";
  for (const auto& turn : turns) {
    html += fmt::format("<div class=\"turn\" id=\"turn-{}\"><b>turn {}</b> <span class=\"muted\">"
                        "· {} tool call(s) · LLM {:.1f} s · tools {:.1f} s · tokens in {} out {}{}"
                        "</span>",
                        turn.turn, turn.turn, turn.calls.size(), turn.llm_s.value_or(0),
                        turn.tool_s.value_or(0), turn.usage.value("input", 0LL),
                        turn.usage.value("output", 0LL), turn.truncated ? " · truncated" : "");
    if (!turn.reasoning.empty()) {
      html += fmt::format(
          "<details><summary>reasoning ({} characters)</summary><pre>{}</pre></details>",
          turn.reasoning.size(), escape(turn.reasoning));
    }
    for (const auto& message : turn.request.value("messages_after", nlohmann::json::array())) {
      if (message.value("role", "") == "assistant" && !message.value("content", "").empty()) {
        html += "<p>" + escape(message.value("content", "")) + "</p>";
      }
    }
    for (const auto& call : turn.calls) {
      const std::string code = kernel_code_of(call.arguments);
      html += fmt::format("<div class=\"call\"><b>{}</b> <span class=\"muted\">{:.1f} s{}</span>",
                          escape(call.tool), call.seconds.value_or(0),
                          call.evaluation_id.empty()
                              ? ""
                              : fmt::format(" · <a href=\"{}\">evaluation {}</a>",
                                            attr(links.to("evaluations", call.evaluation_id)),
                                            escape(call.evaluation_id)));
      html += fmt::format("<details><summary>arguments</summary><pre>{}</pre></details>",
                          escape(code.empty() ? call.arguments : code));
      html += fmt::format("<pre>{}</pre></div>", escape(call.result));
    }
    html += "</div>";
  }
  if (!kernels.empty()) {
    html += fmt::format("<section><h2>Final kernel (turn {})</h2><pre>{}</pre></section>",
                        kernels.back().first, escape(kernels.back().second));
    if (kernels.size() > 1) {
      html += "<section><h2>Kernel versions</h2>";
      for (std::size_t k = 1; k < kernels.size(); ++k) {
        html +=
            fmt::format("<details{}><summary>version {} (turn {}) against version {} (turn "
                        "{})</summary>{}</details>",
                        k + 1 == kernels.size() ? " open" : "", k + 1, kernels[k].first, k,
                        kernels[k - 1].first, diff_html(kernels[k - 1].second, kernels[k].second));
      }
      html += "</section>";
    }
  }
  return {problem_name + " · " + run->model, html, run->state == "running" ? 5 : 0};
}

} // namespace kbench::web
