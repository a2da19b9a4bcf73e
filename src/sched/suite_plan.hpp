#pragma once
// Which evaluations a suite stands for, without running any: the entries of a manifest, or the
// problems a list of paths names. `kbench suite`, `kbench problems check`, the agent loop,
// `serve` and the queue consumer plan their runs alike, then each runs them its own way
// (pipeline/suite_prebuild.hpp builds them ahead). Pure apart from reading the manifest and
// walking directories, so tests/unit/test_suite_plan.cpp checks it directly.
//
// Manifest (JSON): {"entries": [{"problem": P, "candidate": C, "device": "cpu"|"cuda"|"any",
//                                "expect": STATUS, "variant": V, "run_timeout_s": N,
//                                "world_size": N, "rules": R}, ...]}
// "rules" names the static check's rule set for that entry (a bundled name or a path relative
// to the manifest), so a suite can relax a rule for the entries that need it.
// Paths are relative to the manifest's directory. "cpu" entries always run on the CPU, "cuda"
// entries only where a GPU is usable (else they are planned as skipped), "any" entries on the
// suite's device.
#include "core/options.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kbench::sched {

struct ManifestEntry {
  std::string problem, candidate, device, expect, variant;
  std::optional<int> run_timeout_s;
  std::optional<int> world_size; // ranks; absent: the problem's KBENCH_WORLD_SIZE, else 1
  std::string rules;             // static check rule set; empty: the default
};

// The entries of the manifest at `path`. Throws std::runtime_error naming the file, the entry
// and the field ("m.json: entries[2].device must be cpu, cuda or any, not 'gpu'").
std::vector<ManifestEntry> read_manifest(const std::filesystem::path& path);

// One manifest entry as the suite will treat it: run with `run`, or skipped for a reason.
struct PlannedEntry {
  ManifestEntry entry;
  std::string device;             // where it runs: "cpu" or "cuda" ("any" resolved)
  std::optional<EvalOptions> run; // empty when skipped
  std::string skipped_reason;     // "needs a GPU", "needs 2 GPUs, 1 here"
};

// What a suite does with its entries, in manifest order. `options` holds the suite's own flags
// (its device may be "auto"); `manifest_dir` anchors the entries' relative paths; a non-empty
// `only_device` leaves out the entries that run elsewhere; `gpu_count` is the usable GPUs here
// (the caller probes them, so a plan can be checked for any machine).
std::vector<PlannedEntry> plan_suite(const std::vector<ManifestEntry>& entries,
                                     const EvalOptions& options,
                                     const std::filesystem::path& manifest_dir,
                                     const std::string& only_device, int gpu_count);

// The builds that cover `runs`: one compile-only evaluation per distinct (candidate, device),
// first occurrence first. Builds are CPU work and run in parallel before the timed evaluations,
// which then find them in the compile cache.
std::vector<EvalOptions> distinct_builds(const std::vector<EvalOptions>& runs);

// The problem files `paths` name: a file as given, a directory as every .py file beneath it
// but __init__.py, sorted, so a problem set's order does not depend on the file system.
std::vector<std::filesystem::path> expand_problem_paths(const std::vector<std::string>& paths);

} // namespace kbench::sched
