#pragma once
// The evaluation service's requests (docs/service.md): `POST /v1/evaluations` takes one
// evaluation or `{"evaluations": [...]}`, each
//   {"problem": {"path": P} | {"source": S, "filename": F},
//    "candidate": {...the same...},
//    "options": {"device", "variant", "precision", "trials", "rules", "timing", "priority",
//                "reward"}}
// A request is untrusted input: every error names the field ("evaluations[2].options.trials:
// ..."), paths are read only beneath the directories the service allows, and a source is
// written, by its sha256, into the service's own folder, never where the request says.
#include "core/options.hpp"
#include "service/rewards.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kbench::service {

struct RequestLimits {
  std::vector<std::filesystem::path> allowed_paths; // none: paths are refused
  std::filesystem::path sources_dir;                // where sources are written
  std::size_t max_source_bytes = 1 << 20;
  std::size_t max_batch = 1000;
};

struct EvaluationRequest {
  EvalOptions run; // the service's defaults with the request's options on top
  int priority = 0;
  std::optional<RewardSpec> reward;
  nlohmann::json reward_json; // as the request gave it (stored with the job), null when none
};

// All of a POST body's evaluations, or the first error (a batch is accepted whole or not at
// all). `defaults` carries the service's own settings (python, cache, timeouts).
struct ParsedRequests {
  std::vector<EvaluationRequest> evaluations;
  std::string error; // "<field>: <what is wrong>"
};
ParsedRequests parse_requests(const std::string& body, const EvalOptions& defaults,
                              const RequestLimits& limits);

// The job's stored form (what a restarted service needs) and back.
nlohmann::json stored_request(const EvaluationRequest& request);
EvaluationRequest request_from_stored(const nlohmann::json& stored);

} // namespace kbench::service
