// The sections of an evaluation's page (and of a run's final evaluation): what the seed's run
// page shows, each field in its unit or with the reason it has none, every number linked to the
// stored document it came from.
#include "web/charts.hpp"
#include "web/pages.hpp"

#include <fmt/format.h>

#include <regex>

namespace kbench::web {
namespace {

// One "key: value" cell of a grid; `pointer` is the field's place in the raw document.
std::string cell(const std::string& key, const std::string& value, const std::string& raw,
                 const std::string& pointer) {
  return fmt::format("<div><span class=\"k\">{}</span><a href=\"{}#{}\">{}</a></div>", escape(key),
                     attr(raw), attr(pointer), escape(value));
}

std::string side_rows(const std::string& label, const std::optional<TimingSide>& side) {
  if (!side) {
    return "";
  }
  const auto& s = side->stats_us;
  return fmt::format("<tr><th>{}</th><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                     "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                     "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                     "class=\"num\">{:.2f} %</td><td>{}</td></tr>",
                     escape(label), microseconds(s.median), microseconds(s.mean),
                     microseconds(s.std), microseconds(s.p10), microseconds(s.p90),
                     microseconds(s.min), microseconds(s.max), s.n, s.noise * 100,
                     escape(side->stop_reason));
}

std::string counters_section(const CountersInfo& counters) {
  std::string html = "<section><h2>Hardware counters (Nsight Compute)</h2>";
  if (!counters.skipped_reason.empty()) {
    return html + "<p class=\"muted\">" + escape(counters.skipped_reason) + "</p></section>";
  }
  html += fmt::format("<p>SOL score {} · physical limit {} <span class=\"muted\">{}</span></p>",
                      figure(counters.sol_score, "", 4), percent(counters.physical_limit_fraction),
                      escape(counters.physical_limit_detail));
  for (const auto& [label, side] :
       {std::pair{"candidate", &counters.candidate}, std::pair{"reference", &counters.reference}}) {
    if (!side->collected) {
      html +=
          fmt::format("<p>{}: <span class=\"muted\">{}</span></p>", label, escape(side->reason));
      continue;
    }
    const auto call = side->call.is_object() ? side->call.value("call", nlohmann::json::object())
                                             : nlohmann::json::object();
    html +=
        fmt::format("<h2>{} call ({} kernel(s))</h2><div class=\"grid\">", label, side->kernels);
    // value() answers a copy: bound here so that the loop does not walk a destroyed temporary.
    const auto fields = call.value("fields", nlohmann::json::object());
    for (const auto& [id, field] : fields.items()) {
      std::string value;
      if (field.contains("value") && field["value"].is_number()) {
        value = fmt::format("{:.4g} {}", field["value"].get<double>(), field.value("unit", ""));
      } else if (field.contains("value") && field["value"].is_string()) {
        value = field["value"].get<std::string>();
      } else {
        value = "— " + field.value("reason", "");
      }
      html += fmt::format("<div><span class=\"k\">{}</span>{}</div>", escape(id), escape(value));
    }
    html += "</div>";
    std::vector<Bar> stalls;
    for (const auto& stall : call.value("warp_stalls", nlohmann::json::array())) {
      stalls.push_back({stall.value("reason", ""), stall.value("percent", 0.0),
                        fmt::format("{:.1f} %", stall.value("percent", 0.0))});
    }
    if (!stalls.empty()) {
      html += "<h2>Warp stalls</h2>" + bars(stalls);
    }
  }
  return html + "</section>";
}

} // namespace

std::string status_badge(const std::string& status) {
  if (status.empty()) {
    return "<span class=\"muted\">none</span>";
  }
  return fmt::format("<span class=\"{}\">{}</span>", status == "ok" ? "status-ok" : "status-bad",
                     escape(status));
}

int level_of(const std::string& problem_path) {
  static const std::regex level("level[_-]?(\\d+)");
  std::smatch match;
  return std::regex_search(problem_path, match, level) ? std::stoi(match[1]) : 0;
}

std::string evaluation_sections(store::Store& store, const store::StoredEvaluation& stored,
                                const Links& links) {
  const auto decoded = result_from_json(stored.document);
  if (!decoded.value) {
    return "<section><p>The stored document does not read back: " + escape(decoded.error) +
           "</p></section>";
  }
  const EvalResult& r = *decoded.value;
  const std::string raw = links.raw_evaluation(stored.row.id);
  const auto& t = r.timing;
  std::string html = "<section><h2>Result</h2><div class=\"grid\">";
  html += fmt::format("<div><span class=\"k\">status</span>{}</div>",
                      status_badge(status_name(r.status)));
  html += cell("device", r.device_name + " (" + r.device + ")", raw, "/config/device_name");
  html += cell("precision · variant", r.precision + " · " + r.variant, raw, "/config/precision");
  html +=
      cell("runtime",
           microseconds(t.candidate ? std::optional(t.candidate->stats_us.median) : std::nullopt),
           raw, "/timing/candidate/stats/median_us");
  html +=
      cell("reference runtime",
           microseconds(t.reference ? std::optional(t.reference->stats_us.median) : std::nullopt),
           raw, "/timing/reference/stats/median_us");
  std::string speedup = figure(t.speedup, "x");
  if (t.speedup && t.speedup_ci) {
    speedup += fmt::format(" [{:.2f}, {:.2f}]", t.speedup_ci->low, t.speedup_ci->high);
  }
  if (t.speedup && !t.speedup_scored) {
    speedup += " (not a score)";
  }
  html += cell("speedup vs eager", speedup, raw, "/timing/speedup");
  html += cell("speedup vs torch.compile", figure(t.speedup_vs_compiled, "x"), raw,
               "/timing/speedup_vs_compiled");
  html += cell("wall time", figure(r.wall_s, "s", 1), raw, "/wall_s");
  html += cell("started", r.started_at, raw, "/started_at");
  html += "</div>";
  if (!r.message.empty()) {
    html += "<p>" + escape(r.message) + "</p>";
  }
  html += "</section>";

  html += "<section><h2>Timing</h2>";
  if (t.measured) {
    html += "<table><tr><th></th><th class=\"num\">median</th><th class=\"num\">mean</th><th "
            "class=\"num\">std</th><th class=\"num\">p10</th><th class=\"num\">p90</th><th "
            "class=\"num\">min</th><th class=\"num\">max</th><th class=\"num\">n</th><th "
            "class=\"num\">noise</th><th>stopped</th></tr>" +
            side_rows("candidate", t.candidate) + side_rows("reference (eager)", t.reference) +
            side_rows("reference (torch.compile)", t.reference_compiled) + "</table>";
    std::vector<BoxSide> boxes;
    if (t.reference) {
      boxes.push_back({"reference", "ref", t.reference->stats_us});
    }
    if (t.candidate) {
      boxes.push_back({"candidate", "cand", t.candidate->stats_us});
    }
    html += timing_boxes(boxes);
    if (t.candidate) {
      html += fmt::format("<p class=\"muted\">{} · L2 {} · host latency {}</p>",
                          escape(t.candidate->method), t.candidate->l2_flush ? "flushed" : "warm",
                          microseconds(t.candidate->host_stats_us.median));
    }
  } else {
    html += "<p class=\"muted\">not measured: " + escape(t.skipped_reason) + "</p>";
  }
  html += "</section>";

  html += "<section><h2>Numerical precision</h2><div class=\"grid\">";
  html += cell("trials passed", fmt::format("{} / {}", r.trials_passed(), r.trials.size()), raw,
               "/correctness");
  if (const auto errors = r.error_summary()) {
    html += cell("max abs error", fmt::format("{:.3e}", errors->max_abs), raw, "/correctness");
    html += cell("mean abs error", fmt::format("{:.3e}", errors->mean_abs), raw, "/correctness");
    html += cell("max rel error", fmt::format("{:.3e}", errors->max_rel), raw, "/correctness");
    html += cell("mean rel error", fmt::format("{:.3e}", errors->mean_rel), raw, "/correctness");
  }
  html += "</div></section>";

  html += "<section><h2>Memory, launches and fusion</h2><div class=\"grid\">";
  auto peak = [](const std::optional<TimingSide>& side) -> std::optional<double> {
    if (side && side->peak_memory_bytes) {
      return static_cast<double>(*side->peak_memory_bytes);
    }
    return std::nullopt;
  };
  html +=
      cell("candidate peak", bytes(peak(t.candidate)), raw, "/timing/candidate/peak_memory_bytes");
  html +=
      cell("reference peak", bytes(peak(t.reference)), raw, "/timing/reference/peak_memory_bytes");
  html += cell("peak ratio", figure(t.memory_ratio, "x"), raw, "/timing/memory_ratio");
  html += cell("candidate launches / call",
               figure(t.candidate ? t.candidate->launches_per_call : std::nullopt, "", 1), raw,
               "/timing/candidate/launches_per_call");
  html += cell("reference launches / call",
               figure(t.reference ? t.reference->launches_per_call : std::nullopt, "", 1), raw,
               "/timing/reference/launches_per_call");
  html += cell("fusion ratio", figure(t.fusion_ratio, "x"), raw, "/timing/fusion_ratio");
  html +=
      cell("own-kernel share", percent(t.candidate ? t.candidate->own_kernel_share : std::nullopt),
           raw, "/timing/candidate/own_kernel_share");
  html += "</div>";
  if (t.candidate && !t.candidate->kernels_per_call.empty()) {
    html += "<table><tr><th>kernel (candidate)</th><th class=\"num\">per call</th></tr>";
    for (const auto& [name, count] : t.candidate->kernels_per_call) {
      html += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td></tr>", escape(name), count);
    }
    html += "</table>";
  }
  html += "</section>";

  if (r.counters) {
    html += counters_section(*r.counters);
    if (const std::string chart = roofline(r); !chart.empty()) {
      html += "<section><h2>Roofline</h2>" + chart + "</section>";
    }
  }

  html += "<section><h2>Integrity</h2>";
  if (t.flags.empty() && r.static_check.empty() && r.warnings.empty()) {
    html += "<p>No flag, no static-check verdict, no warning.</p>";
  }
  for (const auto& flag : t.flags) {
    html += fmt::format("<p><span class=\"flag\">{}</span>{}</p>", escape(flag.id),
                        escape(flag.message));
  }
  for (const auto& verdict : r.static_check) {
    html += fmt::format("<p><span class=\"flag\">{} {}</span>{}{}</p>", escape(verdict.severity),
                        escape(verdict.rule),
                        verdict.line ? fmt::format("line {}: ", *verdict.line) : "",
                        escape(verdict.message));
  }
  for (const auto& warning : r.warnings) {
    html += "<p class=\"muted\">" + escape(warning) + "</p>";
  }
  html += fmt::format("<p class=\"muted\">{} timed call(s) checked against the reference</p>",
                      t.checked_calls);
  html += "</section>";

  const std::string reference = store.problem_source(r.problem_sha256).value_or("");
  html += fmt::format("<section><h2>Reference source</h2><p class=\"muted\">{} (sha256 "
                      "{})</p><pre>{}</pre></section>",
                      escape(r.problem_path), escape(r.problem_sha256.substr(0, 16)),
                      escape(reference.empty() ? "(not kept: the file had changed when the result "
                                                 "was stored)"
                                               : reference));
  return html;
}

} // namespace kbench::web
