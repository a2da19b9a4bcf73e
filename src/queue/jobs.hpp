#pragma once
// A job on the work queue: one evaluation, self-contained so that a worker on another machine
// needs no shared filesystem: the problem's and the candidate's sources and file names, and the
// evaluation's options (identity_json: what decides the result). Its id is a sha256 of those
// contents and options and kbench's version, so equal work has one id and a result written twice
// is recognised.
#include "core/options.hpp"
#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace kbench::queue {

struct Job {
  std::string id;
  nlohmann::json body;
};

// Throws std::runtime_error naming the file that cannot be read.
Job job_of(const EvalOptions& run);

// The evaluation a worker runs for `body`: its sources written by sha256 under `sources_dir`,
// its options over the worker's own (`worker`: interpreter, cache, device, GPU). Throws
// std::runtime_error naming the field a malformed job got wrong, or a device the worker lacks.
EvalOptions run_of(const nlohmann::json& body, const EvalOptions& worker,
                   const std::filesystem::path& sources_dir);

// A result for a job no evaluation answered (a dead letter, a malformed job): harness_error,
// with `message`, and the job's problem and candidate named.
EvalResult harness_error_for(const nlohmann::json& body, const std::string& message);

} // namespace kbench::queue
