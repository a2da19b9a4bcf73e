#pragma once
// The dashboard (docs/dashboard.md): pages drawn on the server from the store, served by
// `kbench serve` beside the /v1 API and written as static HTML by `kbench report`:
//   /                    what the store holds, and where to go
//   /runs                agent runs, filtered and sorted (query parameters), paginated
//   /runs/ID             one run: the seed page's fields, its turns, kernels, diffs and charts
//   /evaluations         stored evaluations, filtered (the --where fields), paginated
//   /evaluations/ID      one evaluation
//   /problems/SHA256     every run and evaluation of one problem, and its check
//   /leaderboard         by model and tier x level, one board per GPU and software version
//   /compare?a=ID&b=ID   two runs side by side; ?model_a=&model_b= two models over their problems
//   /raw/evaluations/ID.json, /raw/runs/ID.json   the stored documents every number links to
//   /static/kbench.css
#include "store/store.hpp"
#include "web/html.hpp"

#include <filesystem>
#include <map>
#include <string>

namespace kbench::web {

using Query = std::map<std::string, std::string>;

struct SiteOptions {
  std::filesystem::path cache_dir; // where problem checks are recorded (empty: the default)
};

struct Response {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
};

// The page for `path` (no query string), with `query` its parameters; `links` says how pages
// link to each other (served or static).
Response render(store::Store& store, const SiteOptions& options, const std::string& path,
                const Query& query, const Links& links);

// The static report: every page a store holds (the lists' first pages, every run, evaluation
// and problem page, the leaderboard), the raw documents and the stylesheet, under `out`.
// Returns how many files were written.
std::size_t export_site(store::Store& store, const SiteOptions& options,
                        const std::filesystem::path& out);

const std::string& stylesheet();

} // namespace kbench::web
