#pragma once
// A store seeded with agent runs and evaluations made up for the dashboard's tests and its
// bench (no model, no GPU): two models over problems of two levels with two samples each, a
// run whose texts carry HTML and script payloads, an excluded run, a run still in progress and,
// on request, a long run and many more evaluations.
#include "store/store.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kbench::testing {

// What a test or the bench may look for.
struct Seeded {
  std::vector<std::string> run_ids;
  std::string hostile_run;  // texts carry kHostile
  std::string long_run;     // `long_turns` turns
  std::string running_run;  // state "running"
  std::string excluded_run; // final status impossible_timing
  std::string evaluation_id;
  std::string problem_sha256;
};

// Source, reasoning, tool output and a file name carry this.
inline const std::string kHostile =
    "<script>alert(\"owned\")</script><img src=x onerror=alert(1)>\"'&";

// `folder` holds the problem files the runs name. `long_turns` > 0 adds a run of that many
// turns; `extra_evaluations` more evaluations (for the bench).
Seeded seed_store(store::Store& store, const std::filesystem::path& folder, int long_turns = 0,
                  int extra_evaluations = 0, int extra_runs = 0);

} // namespace kbench::testing
