#pragma once
// The reference-side cache (docs/architecture.md, "Reference-side cache"): what the reference
// computes the same way for every candidate of a problem, kept between evaluations so that later
// candidates reuse it. Only kbench itself reads and writes the entries; no worker can read them
// (the landlock deny list of the compile and candidate workers names the cache's root), and the
// reference worker only gets its persistent torch.compile directory. Entries are checksummed and
// written by atomic rename: a corrupt or partial entry is removed and recomputed, never trusted.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kbench {

// Everything the cached reference side depends on. A change to any of them is another entry.
struct ReferenceCacheKey {
  std::string problem_sha256, variant, precision, device_name, torch_version;
  std::string worker_version; // worker_code_version(): kbench's version and its Python code
  std::uint64_t seed = 0;     // --seed
  nlohmann::json trials = nlohmann::json::array(); // the seeded trials' index and seed
};

nlohmann::json key_json(const ReferenceCacheKey& key);
std::string key_digest(const ReferenceCacheKey& key); // sha256 of key_json's text, in hex

// KBENCH_VERSION and a sha256 over every .py file of the worker's Python package (kbench and
// kernelbench, which draws the inputs) in `package_dir`: a kbench change invalidates the cache.
std::string worker_code_version(const std::filesystem::path& package_dir);
// The Python package the worker runs (share/kbench/python beside the binary, else the source's).
std::filesystem::path worker_package_directory();

// <cache_dir>/reference (`cache_dir` empty: sched::cache_directory()).
std::filesystem::path reference_cache_root(const std::filesystem::path& cache_dir);

// The compiled baseline's median over the eager reference's, measured in one evaluation.
struct CompiledRatio {
  double compiled_over_eager = 0;
  std::string measured_at;      // started_at of the evaluation that measured it
  std::string candidate_sha256; // the candidate it was timed with
};

class ReferenceStore {
public:
  explicit ReferenceStore(std::filesystem::path root);

  // Copies a verified entry's trial files into `inputs_dir` and `outputs_dir` and returns the
  // trials as the reference worker would have answered them, and in `from` the evaluation that
  // computed them. Nothing when there is no entry. A corrupt entry is removed and named in
  // `warning`; whatever it copied is removed too.
  std::optional<nlohmann::json> load_trials(const ReferenceCacheKey& key,
                                            const std::filesystem::path& inputs_dir,
                                            const std::filesystem::path& outputs_dir,
                                            std::string& from, std::string& warning) const;
  // Stores the seeded trials (the reference's answer entries: index, seed, input_shapes,
  // outputs) from the scratch directories. Returns a warning, or "" when stored (or when another
  // evaluation stored the same entry first).
  std::string store_trials(const ReferenceCacheKey& key, const nlohmann::json& trials,
                           const std::filesystem::path& inputs_dir,
                           const std::filesystem::path& outputs_dir,
                           const std::string& evaluation) const;

  // The ratio is timed on the first seeded trial's model and shapes only, so it is kept under
  // ratio_key(key): an evaluation asking for more or fewer trials (an agent's or a trainer's
  // requests differ in that alone) reuses it rather than building and timing torch.compile
  // again.
  std::optional<CompiledRatio> load_ratio(const ReferenceCacheKey& key, std::string& warning) const;
  std::string store_ratio(const ReferenceCacheKey& key, const CompiledRatio& ratio) const;
  // `key` with its trial list cut to the first trial.
  static ReferenceCacheKey ratio_key(const ReferenceCacheKey& key);

  // The reference process's TORCHINDUCTOR_CACHE_DIR (TRITON_CACHE_DIR beneath it): one per
  // device and kbench version; inductor keys its own entries by graph and torch version.
  std::filesystem::path inductor_directory(const std::string& device_name,
                                           const std::string& worker_version) const;

  const std::filesystem::path& root() const { return m_root; }
  // The directory of `key`'s entry.
  std::filesystem::path entry_directory(const ReferenceCacheKey& key) const;

private:
  std::filesystem::path m_root;
};

// The files one trial leaves: beneath inputs/ (init and forward inputs) and outputs/.
std::vector<std::string> trial_input_files(int index);
std::string trial_output_file(int index);

} // namespace kbench
