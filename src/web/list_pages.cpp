// The lists: the front page, agent runs (filters: model, tier, problem, level, status, flag,
// date; sorting by column; 50 a page) and stored evaluations (the --where fields). Filters are a
// plain GET form and sorting plain links, so they work without a script.
#include "store/agent_runs.hpp"
#include "store/evaluation_filter.hpp"
#include "web/pages.hpp"

#include <fmt/format.h>

namespace kbench::web {
namespace {

constexpr std::size_t kPageSize = 50;

std::size_t page_of(const Query& query) {
  try {
    return std::max<std::size_t>(1, std::stoul(query_value(query, "page")));
  } catch (const std::exception&) {
    return 1;
  }
}

// The query string for `query` with `key` set to `value` (empty: removed).
std::string with(Query query, const std::string& key, const std::string& value) {
  if (value.empty()) {
    query.erase(key);
  } else {
    query[key] = value;
  }
  std::string text;
  for (const auto& [k, v] : query) {
    std::string encoded;
    for (unsigned char c : v) {
      encoded += std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~'
                     ? std::string(1, static_cast<char>(c))
                     : fmt::format("%{:02X}", c);
    }
    text += (text.empty() ? "?" : "&") + k + "=" + encoded;
  }
  return text;
}

std::string input(const std::string& name, const std::string& value, const std::string& label) {
  return fmt::format("<label>{}<input name=\"{}\" value=\"{}\"></label>", escape(label), attr(name),
                     attr(value));
}

std::string pager(const Links& links, const std::string& kind, const Query& query, std::size_t page,
                  std::size_t total) {
  const std::size_t pages = std::max<std::size_t>(1, (total + kPageSize - 1) / kPageSize);
  std::string html =
      fmt::format("<p class=\"pager\">{} in all · page {} of {} ", total, page, pages);
  if (!links.static_site) {
    if (page > 1) {
      html += fmt::format("<a href=\"{}{}\">previous</a>", attr(links.to(kind)),
                          attr(with(query, "page", std::to_string(page - 1))));
    }
    if (page < pages) {
      html += fmt::format("<a href=\"{}{}\">next</a>", attr(links.to(kind)),
                          attr(with(query, "page", std::to_string(page + 1))));
    }
  } else if (pages > 1) {
    html += "<span class=\"muted\">(the static report holds the first page; kbench serve has "
            "all)</span>";
  }
  return html + "</p>";
}

} // namespace

std::string query_value(const Query& query, const std::string& key) {
  const auto found = query.find(key);
  return found == query.end() ? "" : found->second;
}

PageBody index_page(store::Store& store, const Links& links) {
  store::AgentRuns runs(store);
  store::RunFilter everything;
  const std::size_t run_count = runs.count(everything);
  const std::size_t evaluation_count = store.count_evaluations({});
  std::string html = fmt::format(
      "<h1>kbench</h1><section><p>{} agent run(s) and {} stored evaluation(s) in "
      "<code>{}</code>.</p>"
      "<p><a href=\"{}\">Agent runs</a> · <a href=\"{}\">Evaluations</a> · <a "
      "href=\"{}\">Leaderboard</a></p></section>",
      run_count, evaluation_count, escape(store.path().string()), attr(links.to("runs")),
      attr(links.to("evaluations")), attr(links.to("leaderboard")));
  store::RunFilter recent;
  recent.limit = 10;
  const auto latest = runs.listing(recent);
  if (!latest.empty()) {
    html += "<section><h2>Latest "
            "runs</h2><table><tr><th>run</th><th>problem</th><th>model</th><th>state</"
            "th><th>final</th></tr>";
    for (const auto& row : latest) {
      html += fmt::format(
          "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
          attr(links.to("runs", row.run.id)), escape(row.run.id.substr(0, 8)),
          escape(std::filesystem::path(row.run.problem_path).filename().string()),
          escape(row.run.model), escape(row.run.state), status_badge(row.status));
    }
    html += "</table></section>";
  }
  return {"kbench", html};
}

PageBody runs_page(store::Store& store, const Query& query, const Links& links) {
  store::RunFilter filter;
  filter.model = query_value(query, "model");
  filter.tier = query_value(query, "tier");
  filter.problem = query_value(query, "problem");
  filter.status = query_value(query, "status");
  filter.flag = query_value(query, "flag");
  filter.since = query_value(query, "since");
  try {
    filter.level = query_value(query, "level").empty() ? 0 : std::stoi(query_value(query, "level"));
  } catch (const std::exception&) {
    filter.level = 0;
  }
  filter.sort = query_value(query, "sort").empty() ? "started_at" : query_value(query, "sort");
  filter.descending = query_value(query, "order") != "asc";
  const std::size_t page = page_of(query);
  filter.offset = (page - 1) * kPageSize;
  filter.limit = kPageSize;
  store::AgentRuns runs(store);
  const auto rows = runs.listing(filter);
  const std::size_t total = runs.count(filter);

  std::string html = "<h1>Agent runs</h1>";
  if (!links.static_site) {
    html += fmt::format("<form class=\"filters\" method=\"get\" action=\"{}\">",
                        attr(links.to("runs")));
    html += input("model", filter.model, "model") + input("tier", filter.tier, "tier") +
            input("problem", filter.problem, "problem contains") +
            input("level", query_value(query, "level"), "level") +
            input("status", filter.status, "final status") + input("flag", filter.flag, "flag") +
            input("since", filter.since, "since (date)");
    html += "<button type=\"submit\">filter</button></form>";
  }
  auto header = [&](const std::string& column, const std::string& label) {
    if (links.static_site) {
      return "<th>" + escape(label) + "</th>";
    }
    const bool current = filter.sort == column;
    const std::string order = current && filter.descending ? "asc" : "desc";
    Query sorted = query;
    sorted.erase("page");
    sorted["sort"] = column;
    return fmt::format("<th><a href=\"{}{}\">{}{}</a></th>", attr(links.to("runs")),
                       attr(with(sorted, "order", order)), escape(label),
                       current ? (filter.descending ? " ▼" : " ▲") : "");
  };
  html += "<table><tr>" + header("started_at", "started") + "<th>run</th>" +
          header("problem", "problem") + "<th>level</th>" + header("model", "model") +
          "<th>tier</th><th>state</th>" + header("status", "final") + header("speedup", "speedup") +
          header("turns", "turns") + "<th>flags</th></tr>";
  for (const auto& row : rows) {
    std::string flags;
    for (const auto& flag : row.flags) {
      flags += "<span class=\"flag\">" + escape(flag) + "</span>";
    }
    const int level = level_of(row.run.problem_path);
    html += fmt::format(
        "<tr><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
        escape(row.run.started_at), attr(links.to("runs", row.run.id)),
        escape(row.run.id.substr(0, 8)),
        escape(std::filesystem::path(row.run.problem_path).filename().string()),
        level > 0 ? std::to_string(level) : "—", escape(row.run.model), escape(row.run.tier),
        escape(row.run.state), status_badge(row.status), figure(row.speedup, "x"),
        row.run.summary.value("turns", 0), flags);
  }
  html += "</table>" + pager(links, "runs", query, page, total);
  return {"Agent runs", html};
}

PageBody evaluations_page(store::Store& store, const Query& query, const Links& links) {
  const std::string where = query_value(query, "where");
  store::EvaluationFilter filter;
  std::string problem;
  if (!where.empty()) {
    try {
      std::vector<std::string> conditions;
      std::size_t start = 0;
      for (std::size_t comma = where.find(',');; comma = where.find(',', start)) {
        conditions.push_back(where.substr(start, comma - start));
        if (comma == std::string::npos) {
          break;
        }
        start = comma + 1;
      }
      filter = store::parse_filter(conditions);
    } catch (const store::StoreError& error) {
      problem = error.what();
    }
  }
  const std::size_t page = page_of(query);
  const auto rows = store.list_evaluations(filter, kPageSize, (page - 1) * kPageSize);
  const std::size_t total = store.count_evaluations(filter);
  std::string html = "<h1>Evaluations</h1>";
  if (!links.static_site) {
    html += fmt::format(
        "<form class=\"filters\" method=\"get\" action=\"{}\">{}<button "
        "type=\"submit\">filter</button></form>",
        attr(links.to("evaluations")),
        input("where", where, "FIELD OP VALUE, comma-separated (status=ok,speedup>=1.5)"));
  }
  if (!problem.empty()) {
    html += "<p class=\"status-bad\">" + escape(problem) + "</p>";
  }
  html += "<table><tr><th>created</th><th>evaluation</th><th>origin</th><th>problem</"
          "th><th>candidate</th>"
          "<th>device</th><th>status</th><th class=\"num\">runtime</th><th "
          "class=\"num\">speedup</th><th>flags</th></tr>";
  for (const auto& row : rows) {
    std::string flags;
    for (const auto& flag : row.flags) {
      flags += "<span class=\"flag\">" + escape(flag) + "</span>";
    }
    html += fmt::format(
        "<tr><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td><a "
        "href=\"{}\">{}</a></td><td>{}</td>"
        "<td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
        escape(row.created_at), attr(links.to("evaluations", row.id)), escape(row.id.substr(0, 8)),
        escape(row.origin), attr(links.to("problems", row.problem_sha256)),
        escape(std::filesystem::path(row.problem_path).filename().string()),
        escape(std::filesystem::path(row.candidate_path).filename().string()),
        escape(row.device_name), status_badge(row.status), microseconds(row.candidate_median_us),
        figure(row.speedup, "x"), flags);
  }
  html += "</table>" + pager(links, "evaluations", query, page, total);
  return {"Evaluations", html};
}

} // namespace kbench::web
