// Keys, duplicates and resumed results of a suite (sched/suite_keys.hpp).
#include "sched/suite_keys.hpp"

#include "core/sha256.hpp"
#include "core/source_files.hpp"
#include "sched/jsonl_log.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace kbench::sched {
namespace fs = std::filesystem;

namespace {

auto tie_key(const EvalKey& key) {
  // dump() of nlohmann::json orders an object's keys, so equal options dump equal.
  return std::make_tuple(key.problem_sha256, key.candidate_sha256, key.options.dump(),
                         key.kbench_version);
}

} // namespace

bool EvalKey::operator==(const EvalKey& other) const {
  return tie_key(*this) == tie_key(other);
}
bool EvalKey::operator<(const EvalKey& other) const {
  return tie_key(*this) < tie_key(other);
}

std::string content_key(const EvalKey& key, const std::string& device_name,
                        const std::string& torch_version) {
  const nlohmann::json canonical = {{"problem_sha256", key.problem_sha256},
                                    {"candidate_sha256", key.candidate_sha256},
                                    {"options", key.options},
                                    {"kbench_version", key.kbench_version},
                                    {"device_name", device_name},
                                    {"torch_version", torch_version}};
  return sha256_hex(canonical.dump()); // dump() sorts object keys: one text per key
}

nlohmann::json key_options(const EvalOptions& run) {
  nlohmann::json options = identity_json(run);
  if (!run.rules.empty() && !names_bundled_rule_set(run.rules)) {
    options["rules"] = fs::weakly_canonical(run.rules).string();
  }
  // identity_json leaves compile_only out (a run's options, not its result's), but a build
  // alone is not the evaluation: the agent's compile_kernel stores one, and the service must
  // not answer a full request with it (seen on the H200: a reward of 0, "compile only").
  if (run.compile_only) {
    options["compile_only"] = true;
  }
  return options;
}

std::optional<EvalKey> evaluation_key(const EvalOptions& run) {
  std::string error;
  const auto problem = read_source_file(run.problem, "problem", error);
  const auto candidate = read_source_file(run.candidate, "candidate", error);
  if (!problem || !candidate) {
    return std::nullopt;
  }
  return EvalKey{problem->sha256, candidate->sha256, key_options(run)};
}

std::vector<std::optional<std::size_t>>
find_duplicates(const std::vector<std::optional<EvalKey>>& keys) {
  std::map<EvalKey, std::size_t> first;
  std::vector<std::optional<std::size_t>> duplicates(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!keys[i]) {
      continue;
    }
    const auto [at, inserted] = first.emplace(*keys[i], i);
    if (!inserted) {
      duplicates[i] = at->second;
    }
  }
  return duplicates;
}

nlohmann::json suite_line(const EvalResult& result, const EvalKey& key) {
  nlohmann::json line = to_json(result);
  line["suite_options"] = key.options;
  return line;
}

ResumeLog read_resume_log(const fs::path& path) {
  ResumeLog log;
  JsonlLog lines = read_jsonl_log(path, "result document", "suite");
  log.warnings = std::move(lines.warnings);
  log.complete_bytes = lines.complete_bytes;
  std::size_t without_options = 0;
  for (auto& [number, document] : lines.lines) {
    auto decoded = result_from_json(document);
    if (!decoded.value) {
      throw std::runtime_error(
          fmt::format("{}:{}: not a kbench.eval/1 document ({}); fix or remove the line",
                      path.string(), number, decoded.error));
    }
    if (!document.contains("suite_options") || !document["suite_options"].is_object()) {
      ++without_options;
      continue;
    }
    EvalResult& result = *decoded.value;
    EvalKey key{result.problem_sha256, result.candidate_sha256, document["suite_options"],
                result.kbench_version};
    log.records.emplace_back(std::move(key), std::move(result));
  }
  if (without_options > 0) {
    log.warnings.push_back(
        fmt::format("{}: {} result(s) carry no suite_options (written by `kbench eval` or an "
                    "older kbench suite), so they cannot be matched and are not reused",
                    path.string(), without_options));
  }
  return log;
}

const EvalResult* find_reusable(const ResumeLog& log, const EvalKey& key) {
  for (auto it = log.records.rbegin(); it != log.records.rend(); ++it) {
    if (it->first == key) {
      return it->second.status == Status::harness_error ? nullptr : &it->second;
    }
  }
  return nullptr;
}

} // namespace kbench::sched
