// Routing the dashboard's paths to its pages (web/site.hpp), and the static report.
#include "web/site.hpp"

#include "core/json_io.hpp"
#include "store/agent_runs.hpp"
#include "web/pages.hpp"

#include <fmt/format.h>

#include <set>

namespace kbench::web {
namespace fs = std::filesystem;
namespace {

// "/runs/abc" -> {"runs", "abc"}; "/" -> {"", ""}.
std::pair<std::string, std::string> split_path(std::string path) {
  while (path.size() > 1 && path.back() == '/') {
    path.pop_back();
  }
  if (path.empty() || path == "/") {
    return {"", ""};
  }
  const std::string rest = path.substr(1);
  const auto slash = rest.find('/');
  return slash == std::string::npos ? std::pair{rest, std::string()}
                                    : std::pair{rest.substr(0, slash), rest.substr(slash + 1)};
}

Response html_response(const PageBody& body, const Links& links) {
  PageFrame frame{body.title, links.root, links.static_site, body.refresh_s};
  return {body.status, "text/html; charset=utf-8", page(frame, body.html)};
}

Response raw(store::Store& store, const std::string& rest) {
  const auto slash = rest.find('/');
  const std::string kind = rest.substr(0, slash);
  std::string id = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (id.size() > 5 && id.compare(id.size() - 5, 5, ".json") == 0) {
    id.resize(id.size() - 5);
  }
  if (kind == "evaluations") {
    if (const auto stored = store.find_evaluation(id)) {
      return {200, "application/json", stored->document.dump(2) + "\n"};
    }
  } else if (kind == "runs") {
    store::AgentRuns runs(store);
    if (const auto run = runs.run(id)) {
      nlohmann::json turns = nlohmann::json::array();
      for (const auto& turn : runs.turns(run->id)) {
        nlohmann::json calls = nlohmann::json::array();
        for (const auto& call : turn.calls) {
          calls.push_back({{"call_id", call.call_id},
                           {"tool", call.tool},
                           {"arguments", call.arguments},
                           {"result", call.result},
                           {"kernel_sha256", call.kernel_sha256},
                           {"evaluation_id", call.evaluation_id}});
        }
        turns.push_back({{"turn", turn.turn},
                         {"started_at", turn.started_at},
                         {"request", turn.request},
                         {"reasoning", turn.reasoning},
                         {"usage", turn.usage},
                         {"truncated", turn.truncated},
                         {"tool_calls", calls}});
      }
      const nlohmann::json document = {{"id", run->id},
                                       {"model", run->model},
                                       {"endpoint", run->endpoint},
                                       {"tier", run->tier},
                                       {"state", run->state},
                                       {"problem_path", run->problem_path},
                                       {"config", run->config},
                                       {"summary", run->summary},
                                       {"final_evaluation_id", run->final_evaluation_id},
                                       {"turns", turns}};
      return {200, "application/json", document.dump(2) + "\n"};
    }
  }
  return {404, "application/json",
          nlohmann::json{{"error", "no such document: " + rest}}.dump() + "\n"};
}

} // namespace

Response render(store::Store& store, const SiteOptions& options, const std::string& path,
                const Query& query, const Links& links) {
  const auto [kind, rest] = split_path(path);
  if (kind == "static" && rest == "kbench.css") {
    return {200, "text/css; charset=utf-8", stylesheet()};
  }
  if (kind == "raw") {
    return raw(store, rest);
  }
  PageBody body;
  if (kind.empty()) {
    body = index_page(store, links);
  } else if (kind == "runs") {
    body = rest.empty() ? runs_page(store, query, links) : run_page(store, rest, links);
  } else if (kind == "evaluations") {
    body =
        rest.empty() ? evaluations_page(store, query, links) : evaluation_page(store, rest, links);
  } else if (kind == "problems" && !rest.empty()) {
    body = problem_page(store, options, rest, links);
  } else if (kind == "leaderboard") {
    body = leaderboard_page(store, query, links);
  } else if (kind == "compare") {
    body = compare_page(store, query, links);
  } else {
    body = {"not found", "<h1>Not found</h1><p>No page at " + escape(path) + ".</p>", 0, 404};
  }
  return html_response(body, links);
}

std::size_t export_site(store::Store& store, const SiteOptions& options, const fs::path& out) {
  std::size_t written = 0;
  const auto perms = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                     fs::perms::others_read;
  auto write = [&](const std::string& relative, const std::string& text) {
    const fs::path file = out / relative;
    fs::create_directories(file.parent_path());
    write_file_atomically(file, text, perms);
    ++written;
  };
  // Pages at the top link with "", pages one folder down with "../".
  const Links top{"", true}, nested{"../", true};
  const Query none;
  write("index.html", render(store, options, "/", none, top).body);
  write("runs.html", render(store, options, "/runs", none, top).body);
  write("evaluations.html", render(store, options, "/evaluations", none, top).body);
  write("leaderboard.html", render(store, options, "/leaderboard", none, top).body);
  write("static/kbench.css", stylesheet());
  store::AgentRuns runs(store);
  store::RunFilter all;
  all.limit = 0;
  std::set<std::string> problems;
  for (const auto& row : runs.listing(all)) {
    write("runs/" + row.run.id + ".html",
          render(store, options, "/runs/" + row.run.id, none, nested).body);
    write("raw/runs/" + row.run.id + ".json", raw(store, "runs/" + row.run.id).body);
    problems.insert(row.run.problem_sha256);
  }
  // The ids first: rendering reads the store, which each_evaluation holds while it runs.
  std::vector<std::pair<std::string, std::string>> evaluations; // id, problem sha256
  store.each_evaluation({}, [&](const store::EvaluationRow& row, const std::string&) {
    evaluations.emplace_back(row.id, row.problem_sha256);
  });
  for (const auto& [id, problem] : evaluations) {
    write("evaluations/" + id + ".html",
          render(store, options, "/evaluations/" + id, none, nested).body);
    write("raw/evaluations/" + id + ".json", raw(store, "evaluations/" + id).body);
    problems.insert(problem);
  }
  for (const auto& sha : problems) {
    write("problems/" + sha + ".html",
          render(store, options, "/problems/" + sha, none, nested).body);
  }
  return written;
}

} // namespace kbench::web
