#pragma once
// The pages of the dashboard, one function each (web/*_page.cpp); web/site.cpp routes to them.
// Each returns the page's title and body; the frame (head, navigation) is web/html.cpp's.
#include "store/store.hpp"
#include "web/html.hpp"
#include "web/site.hpp"

#include <optional>
#include <string>

namespace kbench::web {

struct PageBody {
  std::string title;
  std::string html;
  int refresh_s = 0; // a page of something still running
  int status = 200;
};

PageBody index_page(store::Store& store, const Links& links);
PageBody runs_page(store::Store& store, const Query& query, const Links& links);
PageBody evaluations_page(store::Store& store, const Query& query, const Links& links);
PageBody run_page(store::Store& store, const std::string& id, const Links& links);
PageBody evaluation_page(store::Store& store, const std::string& id, const Links& links);
PageBody problem_page(store::Store& store, const SiteOptions& options, const std::string& sha256,
                      const Links& links);
PageBody leaderboard_page(store::Store& store, const Query& query, const Links& links);
PageBody compare_page(store::Store& store, const Query& query, const Links& links);

// The sections every evaluation shows (web/evaluation_sections.cpp): timing, precision,
// memory, launches, counters, integrity, and the reference's source.
std::string evaluation_sections(store::Store& store, const store::StoredEvaluation& stored,
                                const Links& links);
// A query parameter's value, or "" when the query has none.
std::string query_value(const Query& query, const std::string& key);
// A status as a word coloured by its meaning.
std::string status_badge(const std::string& status);
// "level1" -> 1 from a problem's path; 0 when it names no level.
int level_of(const std::string& problem_path);

} // namespace kbench::web
