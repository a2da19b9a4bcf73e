#pragma once
// kbench's results store: one SQLite file in WAL mode (docs/store.md), where `kbench eval` and
// `kbench suite` leave every result, `kbench serve` keeps its queue, and `kbench show`,
// `kbench export` and the pages read them. Readers in other processes go on while one process
// writes; inside a process one connection serves every thread, one call at a time.
#include "core/result.hpp"
#include "store/evaluation_filter.hpp"
#include "store/sqlite.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kbench::store {

// One stored evaluation's indexed columns: what listings, filters and CSV show without reading
// the whole document.
struct EvaluationRow {
  std::string id;
  std::string key;    // content-derived: equal keys are the same evaluation (evaluation_key_id)
  std::string origin; // "eval", "suite", "service", "agent"
  std::optional<std::int64_t> suite_id;
  std::string created_at;
  std::string problem_sha256, candidate_sha256, problem_path, candidate_path;
  std::string status, message, device, device_name, torch_version, kbench_version, variant,
      precision;
  std::optional<double> speedup, speedup_low, speedup_high;
  bool speedup_scored = true;
  std::optional<double> speedup_vs_compiled, speedup_vs_compiled_low, speedup_vs_compiled_high;
  std::optional<double> reference_median_us, candidate_median_us;
  std::vector<std::string> flags;
  double wall_s = 0;
};

struct StoredEvaluation {
  EvaluationRow row;
  nlohmann::json document; // the kbench.eval/1 document as it was stored
};

// The columns of a result, as add_evaluation stores them (id, key, origin and suite unset).
EvaluationRow row_of(const EvalResult& result);

class Store {
public:
  // Opens the store at `path`, migrating an older schema in place; with `create`, a missing file
  // (and its folder) is made, else it is an error that says so. Throws StoreError naming the
  // file when it cannot be used (store/schema.hpp says which files are refused; they are never
  // written).
  explicit Store(const std::filesystem::path& path, bool create = true);
  // <cache>/results.sqlite (sched::cache_directory()).
  static std::filesystem::path default_path();

  const std::filesystem::path& path() const { return m_db.path(); }

  // Stores a result (and its problem's and candidate's sources, read from their paths when the
  // files still have the evaluated contents) and returns its new id.
  std::string add_evaluation(const EvalResult& result, const std::string& key,
                             const std::string& origin,
                             std::optional<std::int64_t> suite_id = std::nullopt);
  // By id, or by a prefix of one (at least 4 characters) that no other id shares. Throws
  // StoreError when the prefix is ambiguous.
  std::optional<StoredEvaluation> find_evaluation(const std::string& id_or_prefix);
  // The newest evaluation with this key whose status is not harness_error (kbench's or the
  // machine's fault, which a new evaluation may not repeat): what a repeated request reuses.
  std::optional<StoredEvaluation> latest_for_key(const std::string& key);
  // Newest first.
  std::vector<EvaluationRow> list_evaluations(const EvaluationFilter& filter, std::size_t limit,
                                              std::size_t offset = 0);
  // The documents of the rows list_evaluations would give, oldest first (an export's order),
  // handed one at a time to `each`, so an export of many does not hold them all.
  void each_evaluation(
      const EvaluationFilter& filter,
      const std::function<void(const EvaluationRow&, const std::string& document)>& each);
  std::size_t count_evaluations(const EvaluationFilter& filter);

  // The text of a problem or candidate the store has seen, by sha256 ("" when it kept none:
  // the file had changed before the result was stored).
  std::optional<std::string> problem_source(const std::string& sha256);
  std::optional<std::string> candidate_source(const std::string& sha256);

  std::int64_t begin_suite(const std::string& manifest, const nlohmann::json& options);
  void finish_suite(std::int64_t suite_id);

  // For the store's other tables (store/job_queue.hpp, the agent runner): the connection and
  // the lock every use of it holds.
  template <typename F>
  auto with_database(F&& f) {
    std::lock_guard lock(m_mutex);
    return f(m_db);
  }

private:
  Database m_db;
  std::mutex m_mutex;
};

// A fresh id: 16 lower-case hex characters from the system's random source.
std::string new_id();
// UTC now, ISO 8601 with milliseconds ("2026-12-02T10:11:12.345Z"): sortable as text.
std::string utc_timestamp();

} // namespace kbench::store
