#pragma once
// The table `kbench suite` prints: one row per evaluation.
#include "core/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kbench::report {

struct SuiteRow {
  std::string problem; // as written in the manifest
  std::string candidate;
  std::string device;
  std::optional<EvalResult> result; // empty when the entry was skipped
  std::string skipped_reason;
  std::string expect; // the status the manifest expects, empty if none
  // Where the result came from when this run did not evaluate it: "duplicate of #3" (the same
  // problem, candidate and options as row 3, evaluated once), "reused from results.jsonl".
  std::string note;
  bool met_expectation() const;
};

// Rows are numbered from 1 in the first column, the number a note refers to.
std::string format_suite_table(const std::vector<SuiteRow>& rows);

} // namespace kbench::report
