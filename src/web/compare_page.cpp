// Compare: two runs side by side (?a=RUN&b=RUN), their differing figures highlighted; or two
// models over the problems both attempted (?model_a=&model_b=): per-problem speedups and their
// ratio, a mark where the two speedups' intervals do not overlap, and a paired bootstrap over
// problems of the mean log-ratio, marked significant when its 95 % interval excludes 0.
#include "store/agent_runs.hpp"
#include "web/pages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace kbench::web {
namespace {

struct Figure {
  std::string label, a, b;
  std::optional<double> value_a, value_b; // numbers, for the change column
  std::string unit;                       // how the change reads: "x" a ratio, else a difference
  bool significant = false;               // the two figures' intervals do not overlap
};

std::optional<double> summary_number(const store::RunListing& r, const char* key) {
  const auto& s = r.run.summary;
  return s.contains(key) && s[key].is_number() ? std::optional(s[key].get<double>()) : std::nullopt;
}

std::vector<Figure> figures_of(const store::RunListing& a, const store::RunListing& b) {
  auto text = [](const std::optional<double>& v, int digits) { return figure(v, "", digits); };
  const bool apart = a.speedup_low && a.speedup_high && b.speedup_low && b.speedup_high &&
                     (*a.speedup_high < *b.speedup_low || *b.speedup_high < *a.speedup_low);
  return {
      {"problem", std::filesystem::path(a.run.problem_path).filename().string(),
       std::filesystem::path(b.run.problem_path).filename().string()},
      {"model", a.run.model, b.run.model},
      {"tier", a.run.tier, b.run.tier},
      {"state", a.run.state, b.run.state},
      {"final status", a.status, b.status},
      {"runtime", microseconds(a.candidate_median_us), microseconds(b.candidate_median_us),
       a.candidate_median_us, b.candidate_median_us, "x"},
      {"speedup", figure(a.speedup, "x"), figure(b.speedup, "x"), a.speedup, b.speedup, "x", apart},
      {"turns", text(summary_number(a, "turns"), 0), text(summary_number(b, "turns"), 0),
       summary_number(a, "turns"), summary_number(b, "turns"), ""},
      {"tool calls", text(summary_number(a, "tool_calls"), 0),
       text(summary_number(b, "tool_calls"), 0), summary_number(a, "tool_calls"),
       summary_number(b, "tool_calls"), ""},
      {"GPU seconds", text(summary_number(a, "gpu_s"), 1), text(summary_number(b, "gpu_s"), 1),
       summary_number(a, "gpu_s"), summary_number(b, "gpu_s"), ""},
      {"wall seconds", text(summary_number(a, "wall_s"), 1), text(summary_number(b, "wall_s"), 1),
       summary_number(a, "wall_s"), summary_number(b, "wall_s"), ""},
      {"device", a.device_name, b.device_name},
      {"torch", a.torch_version, b.torch_version}};
}

// B against A: a ratio for runtimes and speedups, a difference for counts.
std::string change_of(const Figure& f) {
  if (!f.value_a || !f.value_b) {
    return "";
  }
  std::string change;
  if (f.unit == "x") {
    change = *f.value_a != 0 ? fmt::format("{:.2f}x", *f.value_b / *f.value_a) : "";
  } else {
    change = fmt::format("{:+g}", *f.value_b - *f.value_a);
  }
  if (f.significant) {
    change +=
        " <span class=\"sig\" title=\"the two 95 % intervals do not overlap\">significant</span>";
  }
  return change;
}

// The paired bootstrap's 95 % interval of the mean of `log_ratios`.
std::pair<double, double> bootstrap(const std::vector<double>& log_ratios) {
  std::mt19937_64 random(20261202);
  std::uniform_int_distribution<std::size_t> pick(0, log_ratios.size() - 1);
  std::vector<double> means;
  for (int i = 0; i < 2000; ++i) {
    double sum = 0;
    for (std::size_t k = 0; k < log_ratios.size(); ++k) {
      sum += log_ratios[pick(random)];
    }
    means.push_back(sum / static_cast<double>(log_ratios.size()));
  }
  std::sort(means.begin(), means.end());
  return {means[50], means[1949]};
}

std::string two_runs(const store::RunListing& a, const store::RunListing& b, const Links& links) {
  std::string html =
      fmt::format("<h1>Compare runs</h1><table><tr><th></th><th>A: <a href=\"{}\">{}</a></th>"
                  "<th>B: <a href=\"{}\">{}</a></th><th class=\"num\">B against A</th></tr>",
                  attr(links.to("runs", a.run.id)), escape(a.run.id.substr(0, 8)),
                  attr(links.to("runs", b.run.id)), escape(b.run.id.substr(0, 8)));
  for (const auto& f : figures_of(a, b)) {
    const bool differs = f.a != f.b;
    html += fmt::format("<tr{}><th>{}</th><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
                        differs ? " class=\"diff\"" : "", escape(f.label), escape(f.a), escape(f.b),
                        change_of(f));
  }
  return html + "</table><p class=\"muted\">Highlighted: the rows that differ. Runtime and speedup "
                "change as a ratio, counts as a difference; a speedup change is marked significant "
                "when the two bootstrap 95 % intervals do not overlap.</p>";
}

std::string two_models(const std::vector<store::RunListing>& listing, const std::string& model_a,
                       const std::string& model_b, const Links& links) {
  // Each model's first sample per problem.
  std::map<std::string, const store::RunListing*> first_a, first_b;
  for (const auto& row : listing) {
    auto& side = row.run.model == model_a ? first_a : first_b;
    if (row.run.model != model_a && row.run.model != model_b) {
      continue;
    }
    auto& slot = side[row.run.problem_sha256];
    if (slot == nullptr || row.run.sample < slot->run.sample) {
      slot = &row;
    }
  }
  std::string html =
      fmt::format("<h1>Compare {} and {}</h1><table><tr><th>problem</th><th class=\"num\">{}</th>"
                  "<th class=\"num\">{}</th><th class=\"num\">ratio</th></tr>",
                  escape(model_a), escape(model_b), escape(model_a), escape(model_b));
  std::vector<double> log_ratios;
  for (const auto& [problem, a] : first_a) {
    const auto found = first_b.find(problem);
    if (found == first_b.end()) {
      continue;
    }
    const auto* b = found->second;
    // A failure counts as 1x, as on the leaderboard's geomean over all.
    const double sa = a->status == "ok" && a->speedup ? *a->speedup : 1.0;
    const double sb = b->status == "ok" && b->speedup ? *b->speedup : 1.0;
    log_ratios.push_back(std::log(sb / sa));
    const bool apart = a->speedup_low && b->speedup_low &&
                       (*a->speedup_high < *b->speedup_low || *b->speedup_high < *a->speedup_low);
    html += fmt::format(
        "<tr{}><td><a href=\"{}\">{}</a></td><td class=\"num\"><a href=\"{}\">{}</a></td>"
        "<td class=\"num\"><a href=\"{}\">{}</a></td><td class=\"num\">{:.2f}x{}</td></tr>",
        sa != sb ? " class=\"diff\"" : "", attr(links.to("problems", problem)),
        escape(std::filesystem::path(a->run.problem_path).filename().string()),
        attr(links.to("runs", a->run.id)),
        escape(a->status == "ok" ? figure(a->speedup, "x") : a->status),
        attr(links.to("runs", b->run.id)),
        escape(b->status == "ok" ? figure(b->speedup, "x") : b->status), sb / sa,
        apart ? " <span class=\"sig\" title=\"the intervals do not overlap\">*</span>" : "");
  }
  html += "</table>";
  if (log_ratios.size() >= 2) {
    double mean = 0;
    for (double r : log_ratios) {
      mean += r;
    }
    mean /= static_cast<double>(log_ratios.size());
    const auto [low, high] = bootstrap(log_ratios);
    const bool significant = low > 0 || high < 0;
    html += fmt::format("<p>Over {} problems both attempted: {} / {} = {:.3f}x geometric mean, "
                        "95 % paired bootstrap [{:.3f}, {:.3f}] {}</p>",
                        log_ratios.size(), escape(model_b), escape(model_a), std::exp(mean),
                        std::exp(low), std::exp(high),
                        significant ? "<span class=\"sig\">significant</span>"
                                    : "<span class=\"muted\">not significant</span>");
  } else {
    html += "<p class=\"muted\">Fewer than two problems both models attempted.</p>";
  }
  return html;
}

} // namespace

PageBody compare_page(store::Store& store, const Query& query, const Links& links) {
  store::AgentRuns runs(store);
  store::RunFilter all;
  all.limit = 0;
  const auto listing = runs.listing(all);
  const std::string a = query_value(query, "a"), b = query_value(query, "b");
  if (!a.empty() && !b.empty()) {
    const auto ra = runs.run(a), rb = runs.run(b);
    const store::RunListing *la = nullptr, *lb = nullptr;
    for (const auto& row : listing) {
      la = ra && row.run.id == ra->id ? &row : la;
      lb = rb && row.run.id == rb->id ? &row : lb;
    }
    if (la == nullptr || lb == nullptr) {
      return {"Compare",
              "<h1>Compare</h1><p>No such run: " + escape(la == nullptr ? a : b) + "</p>", 0, 404};
    }
    return {"Compare runs", two_runs(*la, *lb, links)};
  }
  const std::string model_a = query_value(query, "model_a"),
                    model_b = query_value(query, "model_b");
  if (!model_a.empty() && !model_b.empty()) {
    return {"Compare models", two_models(listing, model_a, model_b, links)};
  }
  return {"Compare",
          "<h1>Compare</h1><p>Give two runs (<code>?a=RUN&amp;b=RUN</code>) or two models "
          "(<code>?model_a=NAME&amp;model_b=NAME</code>).</p>"};
}

} // namespace kbench::web
