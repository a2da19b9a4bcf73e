#pragma once
// The progress line `kbench suite` keeps updated on a terminal: how far, how fast, how long
// still, and how many went wrong so far.
#include <cstddef>
#include <string>

namespace kbench::report {

struct SuiteProgress {
  std::size_t done = 0, total = 0; // evaluations this run makes (not reused, not duplicates)
  std::size_t failed = 0;          // results other than ok
  std::size_t unexpected = 0;      // results other than the manifest's expect
  double elapsed_s = 0;
  const char* verb = "evaluated"; // "checked" for `kbench problems check`
};

// "12/40 evaluated, 2.4/min, ETA 11 min 40 s, 3 failed (1 not as expected)". The rate and the
// ETA are left out until one evaluation has finished.
std::string format_progress(const SuiteProgress& progress);

} // namespace kbench::report
