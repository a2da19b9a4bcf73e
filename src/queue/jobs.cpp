#include "queue/jobs.hpp"

#include "core/json_io.hpp"
#include "core/sha256.hpp"
#include "core/source_files.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace kbench::queue {
namespace fs = std::filesystem;
namespace {

nlohmann::json source_of(const fs::path& path, const char* role) {
  std::string error;
  const auto file = read_source_file(path, role, error);
  if (!file) {
    throw std::runtime_error(error);
  }
  return {{"filename", path.filename().string()}, {"source", file->text}, {"sha256", file->sha256}};
}

// The job's source `role` written under `folder` (by content, so equal sources share a file).
fs::path write_source(const nlohmann::json& body, const char* role, const fs::path& folder) {
  const auto& part = body.value(role, nlohmann::json::object());
  if (!part.is_object() || !part.contains("source") || !part["source"].is_string()) {
    throw std::runtime_error(fmt::format("job.{}.source: missing, or not a string", role));
  }
  const std::string source = part["source"].get<std::string>();
  std::string filename = part.value("filename", std::string(role) + ".py");
  if (filename.empty() || filename.find('/') != std::string::npos || filename[0] == '.') {
    filename = std::string(role) + ".py"; // a name, never a path the job chooses
  }
  const fs::path file = folder / sha256_hex(source) / filename;
  if (!fs::exists(file)) {
    fs::create_directories(file.parent_path());
    write_file_atomically(file, source,
                          fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
  }
  return file;
}

} // namespace

Job job_of(const EvalOptions& run) {
  Job job;
  nlohmann::json options = identity_json(run);
  job.body = {{"problem", source_of(run.problem, "problem")},
              {"candidate", source_of(run.candidate, "candidate")},
              {"options", options},
              {"kbench_version", KBENCH_VERSION}};
  job.id = sha256_hex(job.body["problem"]["sha256"].get<std::string>() + "\n" +
                      job.body["candidate"]["sha256"].get<std::string>() + "\n" + options.dump() +
                      "\n" + KBENCH_VERSION);
  return job;
}

EvalOptions run_of(const nlohmann::json& body, const EvalOptions& worker,
                   const fs::path& sources_dir) {
  if (!body.is_object()) {
    throw std::runtime_error("job: not a JSON object");
  }
  auto decoded = options_from_json(body.value("options", nlohmann::json::object()), "job.options");
  if (!decoded.value) {
    throw std::runtime_error(decoded.error);
  }
  EvalOptions run = *decoded.value;
  run.problem = write_source(body, "problem", sources_dir);
  run.candidate = write_source(body, "candidate", sources_dir);
  run.python = worker.python;
  run.cache_dir = worker.cache_dir;
  run.gpu = worker.gpu;
  if (run.device == "auto") {
    run.device = worker.device;
  } else if (worker.device != "auto" && run.device != worker.device) {
    throw std::runtime_error(fmt::format(
        "the job asks for device {}, and this worker evaluates on {} (start a worker with "
        "--device {})",
        run.device, worker.device, run.device));
  }
  return run;
}

EvalResult harness_error_for(const nlohmann::json& body, const std::string& message) {
  EvalResult result;
  result.status = Status::harness_error;
  result.message = message;
  if (body.is_object()) {
    const auto name = [&](const char* role) {
      const auto& part = body.value(role, nlohmann::json::object());
      return part.is_object() ? part.value("filename", std::string()) : std::string();
    };
    result.problem_path = name("problem");
    result.candidate_path = name("candidate");
  }
  return result;
}

} // namespace kbench::queue
