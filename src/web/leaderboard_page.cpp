// The leaderboard (web/leaderboard.hpp computes it): by model and tier x level, for one GPU and
// one software version at a time (results from different ones are never averaged: the board
// names the one it shows and links the others), with the excluded runs counted apart.
#include "store/agent_runs.hpp"
#include "web/leaderboard.hpp"
#include "web/pages.hpp"

#include <fmt/format.h>

#include <map>

namespace kbench::web {
namespace {

std::string fingerprint_of(const store::RunListing& row) {
  return fmt::format("{} · torch {} · kbench {}",
                     row.device_name.empty() ? "no device" : row.device_name,
                     row.torch_version.empty() ? "?" : row.torch_version,
                     row.kbench_version.empty() ? "?" : row.kbench_version);
}

std::string with_ci(const std::optional<double>& value, const std::optional<Interval95>& ci) {
  if (!value) {
    return "—";
  }
  return ci ? fmt::format("{:.2f}x [{:.2f}, {:.2f}]", *value, ci->low, ci->high)
            : fmt::format("{:.2f}x", *value);
}

} // namespace

PageBody leaderboard_page(store::Store& store, const Query& query, const Links& links) {
  store::AgentRuns runs(store);
  store::RunFilter all;
  all.limit = 0;
  const auto listing = runs.listing(all);
  // One board per GPU and software version; the most populated one unless the query names one.
  std::map<std::string, std::vector<BoardRun>> boards;
  for (const auto& row : listing) {
    if (row.run.state == "running") {
      continue;
    }
    BoardRun run;
    run.model = row.run.model;
    run.tier = row.run.tier;
    run.problem = row.run.problem_sha256;
    run.level = level_of(row.run.problem_path);
    run.sample = row.run.sample;
    run.status = row.status;
    if (row.status == "ok" && row.speedup && row.speedup_scored) {
      run.speedup = row.speedup;
    }
    run.excluded_why = exclusion_reason(row.status, row.speedup_scored, row.held_out_status);
    run.excluded = !run.excluded_why.empty();
    const auto& summary = row.run.summary;
    run.turns = summary.value("turns", 0);
    const auto tokens = summary.value("tokens", nlohmann::json::object());
    run.tokens = static_cast<double>(tokens.value("input", 0LL) + tokens.value("output", 0LL));
    run.gpu_s = summary.value("gpu_s", 0.0);
    run.wall_s = summary.value("wall_s", 0.0);
    boards[fingerprint_of(row)].push_back(run);
  }
  std::string html = "<h1>Leaderboard</h1>";
  if (boards.empty()) {
    return {"Leaderboard", html + "<p class=\"muted\">No finished agent run in the store yet.</p>"};
  }
  std::string shown;
  if (const auto asked = query.find("board"); asked != query.end() && boards.count(asked->second)) {
    shown = asked->second;
  } else {
    std::size_t most = 0;
    for (const auto& [name, members] : boards) {
      if (members.size() > most) {
        most = members.size();
        shown = name;
      }
    }
  }
  html +=
      fmt::format("<p>Showing <b>{}</b>: results from other GPUs or software versions are never "
                  "averaged in.",
                  escape(shown));
  if (boards.size() > 1 && !links.static_site) {
    html += " Others:";
    for (const auto& [name, members] : boards) {
      if (name != shown) {
        std::string encoded;
        for (unsigned char c : name) {
          encoded +=
              std::isalnum(c) ? std::string(1, static_cast<char>(c)) : fmt::format("%{:02X}", c);
        }
        html +=
            fmt::format(" <a href=\"{}?board={}\">{}</a> ({} runs)", attr(links.to("leaderboard")),
                        attr(encoded), escape(name), members.size());
      }
    }
  }
  html += "</p><section><table><tr><th>model</th><th>tier</th><th>level</th><th "
          "class=\"num\">problems</th>"
          "<th class=\"num\">correct</th>";
  for (double p : fast_p_thresholds()) {
    html += fmt::format("<th class=\"num\">fast_{:g}</th>", p);
  }
  html += "<th class=\"num\">geomean (correct)</th><th class=\"num\">geomean (all; a failure is "
          "1x)</th>"
          "<th class=\"num\">median speedup</th><th class=\"num\">pass@1</th><th "
          "class=\"num\">pass@k</th>"
          "<th class=\"num\">turns</th><th class=\"num\">tokens</th><th class=\"num\">GPU s</th>"
          "<th class=\"num\">wall s</th><th class=\"num\">excluded</th></tr>";
  for (const auto& row : leaderboard(boards[shown])) {
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
        escape(row.model), escape(row.tier), row.level > 0 ? std::to_string(row.level) : "—",
        row.problems, percent(row.correct_share));
    for (double p : fast_p_thresholds()) {
      html += "<td class=\"num\">" +
              percent(row.fast_p.count(p) ? std::optional(row.fast_p.at(p)) : std::nullopt) +
              "</td>";
    }
    html += fmt::format(
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{} of {}</td></tr>",
        with_ci(row.geomean_correct, row.geomean_correct_ci),
        with_ci(row.geomean_all, row.geomean_all_ci), figure(row.median_speedup, "x"),
        percent(row.pass_at_1),
        row.pass_at_k ? fmt::format("{} (k={})", percent(row.pass_at_k), row.k) : "—",
        figure(row.median_turns, "", 1), figure(row.median_tokens, "", 0),
        figure(row.median_gpu_s, "", 1), figure(row.median_wall_s, "", 1), row.excluded, row.runs);
  }
  html +=
      "</table></section><p class=\"muted\">fast_p: the share of problems whose first sample is "
      "correct and faster than p x the reference (KernelBench). Geometric means with bootstrap "
      "95 % intervals over problems; turns, tokens, GPU and wall seconds are medians over the "
      "correct runs. Excluded (counted, never averaged): timing ruled invalid, rejected, a "
      "trivial answer's speedup, or a failed held-out re-check.</p>";
  return {"Leaderboard", html};
}

} // namespace kbench::web
