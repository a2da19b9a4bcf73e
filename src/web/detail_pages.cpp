// One stored evaluation's page, and one problem's: every run and evaluation of it (by content:
// its sha256, whatever path it had), its source, and what `kbench problems check` found.
#include "pipeline/problem_checking.hpp"
#include "store/agent_runs.hpp"
#include "web/pages.hpp"

#include <fmt/format.h>

namespace kbench::web {

PageBody evaluation_page(store::Store& store, const std::string& id, const Links& links) {
  const auto stored = store.find_evaluation(id);
  if (!stored) {
    return {"no such evaluation", "<h1>No evaluation " + escape(id) + "</h1>", 0, 404};
  }
  const auto& row = stored->row;
  std::string html = fmt::format(
      "<h1>{} × {}</h1><p class=\"muted\">evaluation {} ({}) · <a href=\"{}\">raw document</a> · "
      "<a href=\"{}\">problem page</a></p>",
      escape(std::filesystem::path(row.problem_path).filename().string()),
      escape(std::filesystem::path(row.candidate_path).filename().string()), escape(row.id),
      escape(row.origin), attr(links.raw_evaluation(row.id)),
      attr(links.to("problems", row.problem_sha256)));
  html += evaluation_sections(store, *stored, links);
  if (const auto source = store.candidate_source(row.candidate_sha256);
      source && !source->empty()) {
    html += "<section><h2>Candidate source</h2><pre>" + escape(*source) + "</pre></section>";
  }
  return {std::filesystem::path(row.candidate_path).filename().string(), html};
}

PageBody problem_page(store::Store& store, const SiteOptions& options, const std::string& sha256,
                      const Links& links) {
  const auto source = store.problem_source(sha256);
  store::EvaluationFilter filter;
  filter.conditions.push_back({"problem_sha256", "=", sha256});
  const auto evaluations = store.list_evaluations(filter, 200);
  if (!source && evaluations.empty()) {
    return {"no such problem", "<h1>No problem " + escape(sha256) + "</h1>", 0, 404};
  }
  const std::string path = evaluations.empty() ? sha256 : evaluations.front().problem_path;
  std::string html = fmt::format("<h1>{}</h1><p class=\"muted\">{} · sha256 {}</p>",
                                 escape(std::filesystem::path(path).filename().string()),
                                 escape(path), escape(sha256));
  // The checks recorded in the cache, for the settings they were run with.
  std::string checks;
  for (const char* device : {"cuda", "cpu"}) {
    for (const char* variant : {"standard", "popcorn", "popcorn2"}) {
      const auto check = recorded_problem_check(options.cache_dir, sha256, variant, "fp32", device);
      if (!check) {
        continue;
      }
      checks += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>", device, variant,
          status_badge(check->value("verdict", "") == "pass" ? "ok" : check->value("verdict", "")));
      for (const auto& finding : check->value("findings", nlohmann::json::array())) {
        checks += fmt::format("<div><span class=\"flag\">{}</span>{}</div>",
                              escape(finding.value("severity", "")),
                              escape(finding.value("message", "")));
      }
      checks += "</td></tr>";
    }
  }
  html +=
      "<section><h2>Problem check</h2>" +
      (checks.empty()
           ? std::string("<p class=\"muted\">not checked (kbench problems check)</p>")
           : "<table><tr><th>device</th><th>variant</th><th>verdict</th><th>findings</th></tr>" +
                 checks + "</table>") +
      "</section>";
  store::AgentRuns runs(store);
  store::RunFilter all;
  all.limit = 0;
  std::string run_rows;
  for (const auto& row : runs.listing(all)) {
    if (row.run.problem_sha256 != sha256) {
      continue;
    }
    run_rows += fmt::format(
        "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td "
        "class=\"num\">{}</td></tr>",
        attr(links.to("runs", row.run.id)), escape(row.run.id.substr(0, 8)), escape(row.run.model),
        escape(row.run.tier), escape(row.run.state), status_badge(row.status),
        figure(row.speedup, "x"));
  }
  if (!run_rows.empty()) {
    html += "<section><h2>Agent "
            "runs</h2><table><tr><th>run</th><th>model</th><th>tier</th><th>state</th><th>final</"
            "th><th class=\"num\">speedup</th></tr>" +
            run_rows + "</table></section>";
  }
  html +=
      "<section><h2>Evaluations</h2><table><tr><th>evaluation</th><th>origin</th><th>candidate</"
      "th><th>status</th><th class=\"num\">runtime</th><th class=\"num\">speedup</th></tr>";
  for (const auto& row : evaluations) {
    html += fmt::format(
        "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
        attr(links.to("evaluations", row.id)), escape(row.id.substr(0, 8)), escape(row.origin),
        escape(std::filesystem::path(row.candidate_path).filename().string()),
        status_badge(row.status), microseconds(row.candidate_median_us), figure(row.speedup, "x"));
  }
  html += "</table></section>";
  if (source && !source->empty()) {
    html += "<section><h2>Source</h2><pre>" + escape(*source) + "</pre></section>";
  }
  return {std::filesystem::path(path).filename().string(), html};
}

} // namespace kbench::web
