#include "service/request.hpp"

#include "core/json_io.hpp"
#include "core/sha256.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sys/stat.h>

namespace kbench::service {
namespace fs = std::filesystem;
namespace {

// A file suffix a source may be written under: the candidate formats kbench knows.
const std::vector<std::string>& source_suffixes() {
  static const std::vector<std::string> suffixes = {".py", ".cu", ".cpp"};
  return suffixes;
}

bool beneath(const fs::path& path, const fs::path& root) {
  const auto mismatch = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return mismatch.first == root.end();
}

// `{"path": P}` resolved and checked against the allowed folders, or `{"source": S}` written by
// its sha256 into the sources folder (readable by the workers' user: 0755 folder, 0644 file).
fs::path resolve_file(const JsonObjectReader& spec, const std::string& role,
                      const RequestLimits& limits) {
  const auto* path = spec.find("path");
  const auto* source = spec.find("source");
  const auto* filename = spec.find("filename");
  spec.reject_unread("path, or source with an optional filename");
  if ((path != nullptr) == (source != nullptr)) {
    throw JsonFieldError(fmt::format(
        "{}: give either \"path\" (a file beneath an allowed folder) or \"source\" (its text)",
        spec.path()));
  }
  if (path) {
    if (!path->is_string() || path->get<std::string>().empty()) {
      throw_field_error(spec.path_of("path"), "a file path (a string)", *path);
    }
    if (filename) {
      throw JsonFieldError(spec.path_of("filename") + ": goes with \"source\", not \"path\"");
    }
    if (limits.allowed_paths.empty()) {
      throw JsonFieldError(fmt::format("{}: this service reads no paths (it was started without "
                                       "--allow-path); send the file's text as \"source\"",
                                       spec.path_of("path")));
    }
    std::error_code error;
    const fs::path resolved = fs::weakly_canonical(fs::absolute(path->get<std::string>()), error);
    const bool allowed =
        !error && std::any_of(limits.allowed_paths.begin(), limits.allowed_paths.end(),
                              [&](const fs::path& root) { return beneath(resolved, root); });
    if (!allowed) {
      std::vector<std::string> folders;
      for (const auto& folder : limits.allowed_paths) {
        folders.push_back(folder.string());
      }
      throw JsonFieldError(fmt::format("{}: {} is not beneath a folder this service reads ({})",
                                       spec.path_of("path"), path->get<std::string>(),
                                       fmt::join(folders, ", ")));
    }
    if (!fs::is_regular_file(resolved, error)) {
      throw JsonFieldError(
          fmt::format("{}: {} is not a file", spec.path_of("path"), resolved.string()));
    }
    return resolved;
  }
  if (!source->is_string()) {
    throw_field_error(spec.path_of("source"), "the file's text (a string)", *source);
  }
  const auto& text = source->get_ref<const std::string&>();
  if (text.size() > limits.max_source_bytes) {
    throw JsonFieldError(fmt::format("{}: {} bytes, over this service's limit of {} bytes "
                                     "(--max-source-bytes)",
                                     spec.path_of("source"), text.size(), limits.max_source_bytes));
  }
  std::string suffix = ".py";
  if (filename) {
    if (!filename->is_string()) {
      throw_field_error(spec.path_of("filename"), "a file name (a string)", *filename);
    }
    suffix = fs::path(filename->get<std::string>()).extension().string();
    if (std::find(source_suffixes().begin(), source_suffixes().end(), suffix) ==
            source_suffixes().end() ||
        (role == "problem" && suffix != ".py")) {
      throw JsonFieldError(
          fmt::format("{}: {:?} ends in {:?}; a {} is {}", spec.path_of("filename"),
                      filename->get<std::string>(), suffix, role,
                      role == "problem" ? "a .py file"
                                        : "a .py file, or a .cu or .cpp in kbench's torch-free "
                                          "format (docs/native-kernels.md)"));
    }
  }
  std::error_code ignored;
  fs::create_directories(limits.sources_dir, ignored);
  ::chmod(limits.sources_dir.c_str(), 0755);
  const fs::path file = limits.sources_dir / (sha256_hex(text) + suffix);
  if (!fs::exists(file,
                  ignored)) { // several requests may bring it at once: each renames a whole file
    write_file_atomically(file, text,
                          fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
  }
  return file;
}

EvaluationRequest parse_one(const nlohmann::json& value, const std::string& path,
                            const EvalOptions& defaults, const RequestLimits& limits) {
  JsonObjectReader request(value, path);
  EvaluationRequest out;
  out.run = defaults;
  const auto problem = request.object("problem");
  const auto candidate = request.object("candidate");
  const auto options = request.object("options");
  request.reject_unread("problem, candidate, options");
  if (!problem || !candidate) {
    throw JsonFieldError(fmt::format("{}: needs \"problem\" and \"candidate\", each {{\"path\": "
                                     "...}} or {{\"source\": ...}}",
                                     path.empty() ? "request" : path));
  }
  out.run.problem = resolve_file(*problem, "problem", limits);
  out.run.candidate = resolve_file(*candidate, "candidate", limits);
  if (options) {
    options->read("device", out.run.device);
    options->read("variant", out.run.variant);
    options->read("precision", out.run.precision);
    options->read("trials", out.run.trials);
    options->read("rules", out.run.rules);
    bool timing = true;
    options->read("timing", timing);
    out.run.no_timing = !timing;
    options->read("priority", out.priority);
    if (const auto* reward = options->find("reward")) {
      auto decoded = reward_from_json(*reward, options->path_of("reward"));
      if (!decoded.value) {
        throw JsonFieldError(decoded.error);
      }
      out.reward = std::move(decoded.value);
      out.reward_json = *reward;
    }
    options->reject_unread("device, variant, precision, trials, rules, timing, priority, reward");
  }
  for (const auto& problem_found : find_option_problems(out.run)) {
    const std::string field = problem_found.fields.empty() ? "" : problem_found.fields.front();
    const std::string named = field == "no_timing" ? "timing" : field;
    throw JsonFieldError(fmt::format("{}.options{}: {}", path.empty() ? "request" : path,
                                     named.empty() ? "" : "." + named, problem_found.message));
  }
  return out;
}

} // namespace

ParsedRequests parse_requests(const std::string& body, const EvalOptions& defaults,
                              const RequestLimits& limits) {
  ParsedRequests out;
  const auto document = nlohmann::json::parse(body, nullptr, false);
  if (document.is_discarded()) {
    out.error = "the body is not JSON: send one evaluation, or {\"evaluations\": [...]}";
    return out;
  }
  if (!document.is_object()) {
    out.error = "the body must be a JSON object: one evaluation, or {\"evaluations\": [...]}";
    return out;
  }
  try {
    if (document.contains("evaluations")) {
      JsonObjectReader batch(document, "");
      const auto elements = batch.elements("evaluations");
      batch.reject_unread("evaluations (a batch holds nothing else)");
      if (!document["evaluations"].is_array() || elements.empty()) {
        throw JsonFieldError("evaluations: expected a non-empty array of evaluations");
      }
      if (elements.size() > limits.max_batch) {
        throw JsonFieldError(fmt::format("evaluations: {} in one batch, over the limit of {}",
                                         elements.size(), limits.max_batch));
      }
      for (const auto& [element, path] : elements) {
        out.evaluations.push_back(parse_one(*element, path, defaults, limits));
      }
    } else {
      out.evaluations.push_back(parse_one(document, "", defaults, limits));
    }
  } catch (const JsonFieldError& error) {
    out.evaluations.clear();
    out.error = error.what();
  }
  return out;
}

nlohmann::json stored_request(const EvaluationRequest& request) {
  return {{"options", to_json(request.run)},
          {"priority", request.priority},
          {"reward", request.reward_json}};
}

EvaluationRequest request_from_stored(const nlohmann::json& stored) {
  EvaluationRequest out;
  auto decoded = options_from_json(stored.value("options", nlohmann::json::object()));
  if (!decoded.value) {
    throw std::runtime_error("a stored job's options do not read back: " + decoded.error);
  }
  out.run = std::move(*decoded.value);
  out.priority = stored.value("priority", 0);
  out.reward_json = stored.value("reward", nlohmann::json());
  if (!out.reward_json.is_null()) {
    auto reward = reward_from_json(out.reward_json, "reward");
    if (reward.value) {
      out.reward = std::move(reward.value);
    }
  }
  return out;
}

} // namespace kbench::service
