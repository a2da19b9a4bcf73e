#pragma once
// When two suite evaluations are the same one, and which results of an earlier run of a suite
// can stand for a new one. `kbench suite` evaluates a (problem, candidate, options) triple once
// however often its manifest lists it, and with --resume reuses the results its --jsonl already
// holds for the same triple. Pure apart from reading the files, so tests/unit/test_suite_keys.cpp
// checks it directly.
#include "core/options.hpp"
#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kbench::sched {

// What decides an evaluation's result: the problem's and the candidate's contents (not their
// paths), the options that shape the result (identity_json: device, precision, trials, seed,
// the stopping rule...) and the kbench that ran it. A rule set given as a file is keyed on its
// absolute path, so a suite started from another directory still matches.
struct EvalKey {
  std::string problem_sha256, candidate_sha256;
  nlohmann::json options; // identity_json of the run
  std::string kbench_version = KBENCH_VERSION;
  bool operator==(const EvalKey& other) const;
  bool operator<(const EvalKey& other) const;
};

// The key of `run`, or none when the problem or the candidate cannot be read as source (the
// evaluation will say why; such a run is neither deduplicated nor resumed).
std::optional<EvalKey> evaluation_key(const EvalOptions& run);

// The store's key of an evaluation (store/, the evaluation service): a sha256 (hex) of `key` and
// what a result depends on beyond it, the device's name ("NVIDIA H200", "cpu") and the torch
// version of the workers' environment. Equal keys are the same evaluation: a request whose key
// a stored result has is answered from the store.
std::string content_key(const EvalKey& key, const std::string& device_name,
                        const std::string& torch_version);

// The options part of a key, for the options a suite ran with.
nlohmann::json key_options(const EvalOptions& run);

// For each key, the index of the first earlier equal key, or none: the entries a suite
// evaluates once and copies. A missing key is never a duplicate.
std::vector<std::optional<std::size_t>>
find_duplicates(const std::vector<std::optional<EvalKey>>& keys);

// One line of a suite's --jsonl: the result document with the key's options under
// "suite_options", which is what a later --resume matches on. Readers of kbench.eval/1 ignore
// the extra key.
nlohmann::json suite_line(const EvalResult& result, const EvalKey& key);

// The results of an earlier run of a suite, read back from its --jsonl.
struct ResumeLog {
  std::vector<std::pair<EvalKey, EvalResult>> records;
  // What a person should know: the truncated last line that was dropped (a killed suite), the
  // lines that carry no suite_options (written by an older kbench), and so cannot be reused.
  std::vector<std::string> warnings;
  // Bytes of the file up to the end of its last complete line: a resumed suite cuts the file
  // there before it appends, so the dropped partial line does not stay glued to a new one.
  std::uintmax_t complete_bytes = 0;
};

// Reads `path` (a missing file is an empty log). A last line without its newline, or that is
// not a JSON object, is dropped with a warning naming the file and the line. A bad line before
// the last is not something a killed suite leaves: it throws std::runtime_error naming the file
// and the line, so a person looks at the file before kbench appends to it.
ResumeLog read_resume_log(const std::filesystem::path& path);

// The record in `log` that can stand for an evaluation of `key`: the same key, and a status
// other than harness_error (an error of kbench or the machine, which a rerun may not repeat).
// The last such record wins: a result appended later is the newer one.
const EvalResult* find_reusable(const ResumeLog& log, const EvalKey& key);

} // namespace kbench::sched
