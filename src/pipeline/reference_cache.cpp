#include "pipeline/reference_cache.hpp"

#include "core/sha256.hpp"
#include "sched/paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace kbench {
namespace fs = std::filesystem;

namespace {

constexpr const char* kSchema = "kbench.reference-cache/1";

std::optional<std::string> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

std::optional<std::string> file_sha256(const fs::path& path) {
  const auto bytes = read_bytes(path);
  return bytes ? std::optional(sha256_hex(*bytes)) : std::nullopt;
}

// A name no other writer picks: the pid and random bits.
std::string unique_suffix() {
  std::random_device entropy;
  return fmt::format("{}-{:08x}", getpid(), entropy());
}

// Directories only kbench's user may list or open (the worker user, where kbench is root, is
// another user). `traverse`: others may pass through, to reach a directory handed over to them.
void make_private_directory(const fs::path& directory, bool traverse) {
  fs::create_directories(directory);
  ::chmod(directory.c_str(), traverse ? 0711 : 0700);
}

// {"body": ..., "sha256": sha256(body)}: a truncated or altered document fails the check.
std::string sealed(const nlohmann::json& body) {
  return nlohmann::json{{"body", body}, {"sha256", sha256_hex(body.dump())}}.dump(1);
}

std::optional<nlohmann::json> unseal(const std::string& text, std::string& why) {
  const auto document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded() || !document.is_object() || !document.contains("body") ||
      !document.value("sha256", nlohmann::json()).is_string()) {
    why = "not a sealed JSON document";
    return std::nullopt;
  }
  if (sha256_hex(document["body"].dump()) != document["sha256"].get<std::string>()) {
    why = "its checksum does not match its content";
    return std::nullopt;
  }
  return document["body"];
}

// Writes `text` to `path` through a temporary file and a rename: a reader sees all or nothing.
std::string write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp-" + unique_suffix();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      return fmt::format("cannot write {}", tmp.string());
    }
  }
  std::error_code error;
  fs::rename(tmp, path, error);
  if (error) {
    fs::remove(tmp, error);
    return fmt::format("cannot rename into {}: {}", path.string(), error.message());
  }
  return "";
}

// A copy belongs to kbench's user; the workers' scratch directories were handed over to the
// worker user (a root kbench's `nobody`), who must read it as it reads what the reference wrote.
bool owned_like_directory(const fs::path& file) {
  struct stat directory {};
  return ::stat(file.parent_path().c_str(), &directory) == 0 &&
         (directory.st_uid == geteuid() ||
          ::chown(file.c_str(), directory.st_uid, directory.st_gid) == 0);
}

void remove_copies(const std::vector<fs::path>& copied) {
  std::error_code ignored;
  for (const auto& path : copied) {
    fs::remove(path, ignored);
  }
}

} // namespace

std::vector<std::string> trial_input_files(int index) {
  std::vector<std::string> names;
  for (const char* part : {"init", "inputs"}) {
    for (const char* ext : {"json", "safetensors"}) {
      names.push_back(fmt::format("trial_{}.{}.{}", index, part, ext));
    }
  }
  return names;
}

std::string trial_output_file(int index) {
  return fmt::format("trial_{}.outputs.safetensors", index);
}

nlohmann::json key_json(const ReferenceCacheKey& key) {
  return {{"schema", kSchema},
          {"problem_sha256", key.problem_sha256},
          {"variant", key.variant},
          {"precision", key.precision},
          {"device_name", key.device_name},
          {"torch", key.torch_version},
          {"worker_version", key.worker_version},
          {"seed", key.seed},
          {"trials", key.trials}};
}

std::string key_digest(const ReferenceCacheKey& key) {
  return sha256_hex(key_json(key).dump());
}

fs::path worker_package_directory() {
  const fs::path installed =
      sched::worker_executable().parent_path() / ".." / "share" / "kbench" / "python";
  if (fs::exists(installed / "kbench" / "worker" / "handlers.py")) {
    return fs::weakly_canonical(installed);
  }
  return fs::path(KBENCH_SOURCE_DIR) / "python";
}

std::string worker_code_version(const fs::path& package_dir) {
  std::vector<fs::path> files;
  for (const char* package : {"kbench", "kernelbench"}) {
    std::error_code error;
    for (fs::recursive_directory_iterator it(package_dir / package, error), end;
         !error && it != end; it.increment(error)) {
      if (it->is_regular_file() && it->path().extension() == ".py") {
        files.push_back(it->path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  Sha256 digest;
  digest.update(std::string_view(KBENCH_VERSION));
  for (const auto& file : files) {
    digest.update(fs::relative(file, package_dir).string());
    digest.update(read_bytes(file).value_or("<unreadable>"));
  }
  return fmt::format("{}+{}", KBENCH_VERSION, digest.hex_digest().substr(0, 16));
}

fs::path reference_cache_root(const fs::path& cache_dir) {
  return (cache_dir.empty() ? sched::cache_directory() : cache_dir) / "reference";
}

ReferenceStore::ReferenceStore(fs::path root) : m_root(std::move(root)) {}

fs::path ReferenceStore::entry_directory(const ReferenceCacheKey& key) const {
  return m_root / "entries" / key_digest(key).substr(0, 32);
}

fs::path ReferenceStore::inductor_directory(const std::string& device_name,
                                            const std::string& worker_version) const {
  make_private_directory(m_root, true);
  make_private_directory(m_root / "inductor", true);
  return m_root / "inductor" / sha256_hex(device_name + "\n" + worker_version).substr(0, 32);
}

std::optional<nlohmann::json> ReferenceStore::load_trials(const ReferenceCacheKey& key,
                                                          const fs::path& inputs_dir,
                                                          const fs::path& outputs_dir,
                                                          std::string& from,
                                                          std::string& warning) const {
  const fs::path entry = entry_directory(key) / "trials";
  const auto text = read_bytes(entry / "manifest.json");
  if (!text) {
    return std::nullopt; // no entry (or one whose rename never happened)
  }
  std::vector<fs::path> copied;
  const auto corrupt = [&](const std::string& why) -> std::optional<nlohmann::json> {
    remove_copies(copied);
    std::error_code ignored;
    fs::remove_all(entry, ignored);
    warning = fmt::format("the reference cache's entry {} was corrupt ({}): removed, and the "
                          "reference side computed afresh",
                          entry.string(), why);
    return std::nullopt;
  };
  std::string why;
  const auto body = unseal(*text, why);
  if (!body) {
    return corrupt("manifest.json: " + why);
  }
  if (body->value("key", nlohmann::json()) != key_json(key)) {
    return corrupt("manifest.json was written for another key");
  }
  const auto files = body->value("files", nlohmann::json::object());
  const auto trials = body->value("trials", nlohmann::json::array());
  if (!files.is_object() || !trials.is_array() || trials.size() != key.trials.size()) {
    return corrupt("manifest.json does not list the trials' files");
  }
  // Copied first and the copies checked: what is checked is what the evaluation reads.
  for (const auto& [name, sha] : files.items()) {
    const bool input = name.starts_with("inputs/");
    const fs::path target = (input ? inputs_dir : outputs_dir) / fs::path(name).filename();
    std::error_code error;
    fs::copy_file(entry / name, target, fs::copy_options::overwrite_existing, error);
    if (error) {
      return corrupt(fmt::format("{}: {}", name, error.message()));
    }
    copied.push_back(target);
    if (!owned_like_directory(target)) {
      return corrupt(fmt::format("cannot give {} to the owner of its directory", target.string()));
    }
    if (file_sha256(target) != sha.get<std::string>()) {
      return corrupt(name + ": its checksum does not match the manifest");
    }
  }
  from = body->value("evaluation", "");
  return trials;
}

static std::uintmax_t max_entry_bytes() {
  const char* configured = std::getenv("KBENCH_REFERENCE_CACHE_MAX_MB");
  const long megabytes = configured && *configured ? std::atol(configured) : 256;
  return static_cast<std::uintmax_t>(std::max(0L, megabytes)) << 20;
}

std::string ReferenceStore::store_trials(const ReferenceCacheKey& key, const nlohmann::json& trials,
                                         const fs::path& inputs_dir, const fs::path& outputs_dir,
                                         const std::string& evaluation) const {
  const fs::path entry = entry_directory(key);
  if (fs::exists(entry / "trials" / "manifest.json")) {
    return ""; // a concurrent evaluation stored it first
  }
  // Large trials are not cached: copying them back costs about what recomputing them does, and
  // an entry per problem, seed and trial list would fill the disk (1.3 GB for the level1 ReLU's
  // five trials). KBENCH_REFERENCE_CACHE_MAX_MB raises the cap.
  std::uintmax_t total = 0;
  for (const auto& trial : trials) {
    const int index = trial.value("index", -1);
    std::error_code ignored;
    for (const auto& name : trial_input_files(index)) {
      total += fs::file_size(inputs_dir / name, ignored);
    }
    total += fs::file_size(outputs_dir / trial_output_file(index), ignored);
  }
  if (total > max_entry_bytes()) {
    return "";
  }
  make_private_directory(m_root, true);
  make_private_directory(m_root / "entries", false);
  fs::create_directories(entry);
  const fs::path tmp = entry / ("trials.tmp-" + unique_suffix());
  std::error_code error;
  const auto abandon = [&](const std::string& why) {
    fs::remove_all(tmp, error);
    return "the reference outputs were not cached: " + why;
  };
  fs::create_directories(tmp / "inputs");
  fs::create_directories(tmp / "outputs");
  nlohmann::json files = nlohmann::json::object();
  for (const auto& trial : trials) {
    const int index = trial.value("index", -1);
    std::vector<std::pair<fs::path, std::string>> wanted;
    for (const auto& name : trial_input_files(index)) {
      wanted.emplace_back(inputs_dir / name, "inputs/" + name);
    }
    wanted.emplace_back(outputs_dir / trial_output_file(index),
                        "outputs/" + trial_output_file(index));
    for (const auto& [source, name] : wanted) {
      fs::copy_file(source, tmp / name, error);
      if (error) {
        return abandon(fmt::format("{}: {}", source.string(), error.message()));
      }
      const auto sha = file_sha256(tmp / name);
      if (!sha) {
        return abandon("cannot read back " + (tmp / name).string());
      }
      files[name] = *sha;
    }
  }
  const nlohmann::json body = {
      {"key", key_json(key)}, {"trials", trials}, {"files", files}, {"evaluation", evaluation}};
  if (const std::string failed = write_atomically(tmp / "manifest.json", sealed(body));
      !failed.empty()) {
    return abandon(failed);
  }
  // The whole entry appears at once, or not at all.
  fs::rename(tmp, entry / "trials", error);
  if (error) {
    const bool lost_race = fs::exists(entry / "trials" / "manifest.json");
    fs::remove_all(tmp, error);
    return lost_race ? "" : abandon("cannot rename the entry into place");
  }
  std::ofstream(entry / "key.json") << key_json(key).dump(1); // for people; never read back
  return "";
}

ReferenceCacheKey ReferenceStore::ratio_key(const ReferenceCacheKey& key) {
  ReferenceCacheKey first = key;
  if (first.trials.is_array() && first.trials.size() > 1) {
    first.trials = nlohmann::json::array({first.trials.front()});
  }
  return first;
}

std::optional<CompiledRatio> ReferenceStore::load_ratio(const ReferenceCacheKey& full_key,
                                                        std::string& warning) const {
  const ReferenceCacheKey key = ratio_key(full_key);
  const fs::path path = entry_directory(key) / "compiled_ratio.json";
  const auto text = read_bytes(path);
  if (!text) {
    return std::nullopt;
  }
  std::string why;
  const auto body = unseal(*text, why);
  const auto ratio = body ? body->value("compiled_over_eager", 0.0) : 0.0;
  if (!body || body->value("key", nlohmann::json()) != key_json(key) || !(ratio > 0)) {
    std::error_code ignored;
    fs::remove(path, ignored);
    warning = fmt::format("the reference cache's {} was corrupt ({}): removed, and the compiled "
                          "baseline timed afresh",
                          path.string(), body ? "wrong key or ratio" : why);
    return std::nullopt;
  }
  return CompiledRatio{ratio, body->value("measured_at", ""), body->value("candidate_sha256", "")};
}

std::string ReferenceStore::store_ratio(const ReferenceCacheKey& full_key,
                                        const CompiledRatio& ratio) const {
  const ReferenceCacheKey key = ratio_key(full_key);
  make_private_directory(m_root, true);
  make_private_directory(m_root / "entries", false);
  const fs::path entry = entry_directory(key);
  fs::create_directories(entry);
  const nlohmann::json body = {{"key", key_json(key)},
                               {"compiled_over_eager", ratio.compiled_over_eager},
                               {"measured_at", ratio.measured_at},
                               {"candidate_sha256", ratio.candidate_sha256}};
  const std::string failed = write_atomically(entry / "compiled_ratio.json", sealed(body));
  return failed.empty() ? "" : "the compiled/eager ratio was not cached: " + failed;
}

} // namespace kbench
