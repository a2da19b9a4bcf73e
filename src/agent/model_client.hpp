#pragma once
// A model server behind one of the two wire protocols (agent/wire_protocols.hpp): one call per
// turn, with retries where a retry can help (429 and 5xx, honouring Retry-After; a timeout; a
// connection that failed), backoff with jitter, and, where it cannot, an error that names the
// cause: bad credentials, an unknown model, a server that does not do tool calls, a request it
// refuses. A model server's answer is untrusted input: one that is not the protocol's shape is
// a bad_reply error, never a crash.
#include "agent/conversation.hpp"
#include "agent/replay_model.hpp"
#include "agent/wire_protocols.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kbench::agent {

struct Endpoint {
  std::string url; // the server's base URL; /v1/... is appended (a URL ending in /v1 is fine)
  std::string model;
  Api api = Api::chat;
  std::string api_key;                                         // empty: no Authorization header
  std::chrono::milliseconds timeout{std::chrono::minutes(10)}; // per call
  int max_retries = 6;
  double backoff_base_s = 1.0, backoff_cap_s = 60.0;
  nlohmann::json extra = nlohmann::json::object(); // more request fields (max_tokens, ...)
  // --model replay:FILE: the recording played instead of a server (agent/replay_model.hpp).
  std::shared_ptr<const Recording> replay;
};

enum class ModelErrorKind {
  credentials,   // 401, 403
  unknown_model, // 404 about the model
  no_tools,      // 400 about tools: the server (or model) does not do tool calls
  rejected,      // another 4xx
  unavailable,   // 429 or 5xx still, after the retries
  unreachable,   // no answer: refused, reset, timed out, after the retries
  bad_reply,     // an answer that is not the protocol's shape
};
const char* model_error_name(ModelErrorKind kind);

struct ModelError : std::runtime_error {
  ModelError(ModelErrorKind kind_, long status_, const std::string& message)
      : std::runtime_error(message), kind(kind_), status(status_) {}
  ModelErrorKind kind;
  long status;
};

class ModelClient {
public:
  explicit ModelClient(Endpoint endpoint) : m_endpoint(std::move(endpoint)) {}
  // Throws ModelError.
  ModelReply complete(const std::vector<Message>& messages, const std::vector<ToolSpec>& tools);
  const Endpoint& endpoint() const { return m_endpoint; }
  std::string url() const;

private:
  Endpoint m_endpoint;
};

// Seconds to wait before retry `attempt` (0-based): base·2^attempt with ±50 % jitter, capped;
// a server's Retry-After (seconds) is honoured when longer.
double backoff_seconds(const Endpoint& endpoint, int attempt, double retry_after_s);

// What `kbench agent probe` checks, once each: the server answers, the credentials and the
// model are accepted, a tool call comes back, the reasoning it returns (if any) is accepted
// back, and token usage is reported. One row per check: its name, passed, what was seen.
struct ProbeRow {
  std::string check;
  bool passed = false;
  std::string detail;
};
std::vector<ProbeRow> probe(const Endpoint& endpoint);

} // namespace kbench::agent
