#include "store/row_columns.hpp"

#include <fmt/format.h>

namespace kbench::store {
namespace {

std::string number(const std::optional<double>& value) {
  return value ? fmt::format("{}", *value) : std::string();
}

} // namespace

const std::vector<std::string>& row_column_names() {
  static const std::vector<std::string> names = {"id",
                                                 "created_at",
                                                 "origin",
                                                 "suite_id",
                                                 "problem",
                                                 "candidate",
                                                 "problem_sha256",
                                                 "candidate_sha256",
                                                 "status",
                                                 "message",
                                                 "device",
                                                 "device_name",
                                                 "torch_version",
                                                 "kbench_version",
                                                 "variant",
                                                 "precision",
                                                 "speedup",
                                                 "speedup_low",
                                                 "speedup_high",
                                                 "speedup_scored",
                                                 "speedup_vs_compiled",
                                                 "speedup_vs_compiled_low",
                                                 "speedup_vs_compiled_high",
                                                 "reference_median_us",
                                                 "candidate_median_us",
                                                 "flags",
                                                 "wall_s",
                                                 "key"};
  return names;
}

std::vector<std::string> row_values(const EvaluationRow& row) {
  std::string flags;
  for (const auto& flag : row.flags) {
    flags += (flags.empty() ? "" : " ") + flag;
  }
  return {row.id,
          row.created_at,
          row.origin,
          row.suite_id ? std::to_string(*row.suite_id) : std::string(),
          row.problem_path,
          row.candidate_path,
          row.problem_sha256,
          row.candidate_sha256,
          row.status,
          row.message,
          row.device,
          row.device_name,
          row.torch_version,
          row.kbench_version,
          row.variant,
          row.precision,
          number(row.speedup),
          number(row.speedup_low),
          number(row.speedup_high),
          row.speedup_scored ? "true" : "false",
          number(row.speedup_vs_compiled),
          number(row.speedup_vs_compiled_low),
          number(row.speedup_vs_compiled_high),
          number(row.reference_median_us),
          number(row.candidate_median_us),
          flags,
          fmt::format("{}", row.wall_s),
          row.key};
}

} // namespace kbench::store
