#include "agent/model_client.hpp"

#include "agent/http.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

namespace kbench::agent {
namespace {

bool retryable_status(long status) {
  return status == 408 || status == 425 || status == 429 || status == 500 || status == 502 ||
         status == 503 || status == 504 || status == 529;
}

double retry_after_of(const HttpReply& reply) {
  const auto found = reply.headers.find("retry-after");
  if (found == reply.headers.end()) {
    return 0;
  }
  try {
    return std::max(0.0, std::stod(found->second)); // an HTTP date is rare from these servers
  } catch (const std::exception&) {
    return 0;
  }
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

ModelError classify(const Endpoint& endpoint, const std::string& url, const HttpReply& reply,
                    bool sent_tools) {
  const std::string said = error_message(reply.body);
  const std::string text = lower(said + " " + reply.body.substr(0, 2000));
  const long status = reply.status;
  if (status == 401 || status == 403) {
    return {ModelErrorKind::credentials, status,
            fmt::format("{} refused the credentials (HTTP {}: {}); give the key in the variable "
                        "--api-key-env names",
                        url, status, said)};
  }
  if (status == 404 && (text.find("model") != std::string::npos)) {
    return {ModelErrorKind::unknown_model, status,
            fmt::format("{} does not know the model {:?} (HTTP 404: {}); check --model", url,
                        endpoint.model, said)};
  }
  if (status == 404) {
    return {ModelErrorKind::rejected, status,
            fmt::format("{} answered 404 ({}): check --endpoint (kbench appends {}) and --api", url,
                        said, api_path(endpoint.api))};
  }
  if (sent_tools && status >= 400 && status < 500 &&
      (text.find("tool") != std::string::npos || text.find("function") != std::string::npos)) {
    return {ModelErrorKind::no_tools, status,
            fmt::format("{} does not do tool calls for {:?} (HTTP {}: {}); a vLLM server needs "
                        "--enable-auto-tool-choice and --tool-call-parser for the model "
                        "(docs/agent.md)",
                        url, endpoint.model, status, said)};
  }
  if (status >= 400 && status < 500) {
    return {ModelErrorKind::rejected, status,
            fmt::format("{} rejected the request (HTTP {}: {})", url, status, said)};
  }
  return {ModelErrorKind::unavailable, status,
          fmt::format("{} kept failing (HTTP {}: {})", url, status, said)};
}

} // namespace

const char* model_error_name(ModelErrorKind kind) {
  switch (kind) {
  case ModelErrorKind::credentials:
    return "credentials";
  case ModelErrorKind::unknown_model:
    return "unknown_model";
  case ModelErrorKind::no_tools:
    return "no_tools";
  case ModelErrorKind::rejected:
    return "rejected";
  case ModelErrorKind::unavailable:
    return "unavailable";
  case ModelErrorKind::unreachable:
    return "unreachable";
  case ModelErrorKind::bad_reply:
    return "bad_reply";
  }
  return "unknown";
}

double backoff_seconds(const Endpoint& endpoint, int attempt, double retry_after_s) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  const double grown = endpoint.backoff_base_s * std::pow(2.0, attempt);
  const double jittered =
      std::min(endpoint.backoff_cap_s, grown) * std::uniform_real_distribution<>(0.5, 1.5)(random);
  return std::max(jittered, std::min(retry_after_s, 300.0));
}

std::string ModelClient::url() const {
  if (m_endpoint.replay) {
    return "replay:" + m_endpoint.replay->file.string();
  }
  std::string base = m_endpoint.url;
  while (!base.empty() && base.back() == '/') {
    base.pop_back();
  }
  std::string path = api_path(m_endpoint.api);
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0) {
    path = path.substr(3);
  }
  return base + path;
}

ModelReply ModelClient::complete(const std::vector<Message>& messages,
                                 const std::vector<ToolSpec>& tools) {
  if (m_endpoint.replay) {
    return replay_reply(*m_endpoint.replay, messages);
  }
  const std::string target = url();
  const nlohmann::json request =
      build_request(m_endpoint.api, m_endpoint.model, messages, tools, m_endpoint.extra);
  const std::string body = request.dump();
  std::vector<std::string> headers = {"Content-Type: application/json", "Accept: application/json"};
  if (!m_endpoint.api_key.empty()) {
    headers.push_back("Authorization: Bearer " + m_endpoint.api_key);
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> retried;
  for (int attempt = 0;; ++attempt) {
    const HttpReply reply = http_exchange("POST", target, headers, body, m_endpoint.timeout);
    const bool no_answer = reply.status == 0;
    if (!no_answer && reply.status >= 200 && reply.status < 300) {
      ModelReply parsed;
      try {
        parsed = parse_reply(m_endpoint.api, reply.body);
      } catch (const BadReply& error) {
        throw ModelError(ModelErrorKind::bad_reply, reply.status,
                         fmt::format("{} answered, but not in the {} protocol: {}", target,
                                     api_name(m_endpoint.api), error.what()));
      }
      parsed.request = request;
      parsed.raw = reply.body;
      parsed.latency_s = reply.seconds;
      parsed.total_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      parsed.attempts = attempt + 1;
      parsed.retried = std::move(retried);
      return parsed;
    }
    const bool again = no_answer || retryable_status(reply.status);
    if (!again || attempt >= m_endpoint.max_retries) {
      if (no_answer) {
        throw ModelError(
            ModelErrorKind::unreachable, 0,
            fmt::format("{}: no answer after {} attempt(s): {}", target, attempt + 1, reply.error));
      }
      ModelError error = classify(m_endpoint, target, reply, !tools.empty());
      if (again) {
        throw ModelError(error.kind, error.status,
                         fmt::format("{} after {} attempts", error.what(), attempt + 1));
      }
      throw error;
    }
    const double wait = backoff_seconds(m_endpoint, attempt, retry_after_of(reply));
    retried.push_back(no_answer
                          ? fmt::format("attempt {}: {} ({:.1f} s); waited {:.1f} s", attempt + 1,
                                        reply.error, reply.seconds, wait)
                          : fmt::format("attempt {}: HTTP {} ({}); waited {:.1f} s", attempt + 1,
                                        reply.status, error_message(reply.body), wait));
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
}

std::vector<ProbeRow> probe(const Endpoint& endpoint) {
  std::vector<ProbeRow> rows;
  Endpoint once = endpoint;
  once.max_retries = 1;
  ModelClient client(once);
  const std::vector<Message> hello = {text_message("user", "Reply with the word OK.")};
  try {
    const auto reply = client.complete(hello, {});
    rows.push_back(
        {"answers, credentials and model accepted", true,
         fmt::format("{:.1f} s, {:?}", reply.latency_s, reply.message.content.substr(0, 60))});
    rows.push_back({"token usage reported", reply.usage.total() > 0,
                    fmt::format("input {}, cached {}, output {}, reasoning {}", reply.usage.input,
                                reply.usage.cached, reply.usage.output, reply.usage.reasoning)});
  } catch (const ModelError& error) {
    rows.push_back({"answers, credentials and model accepted", false,
                    fmt::format("{}: {}", model_error_name(error.kind), error.what())});
    return rows; // nothing else can be checked
  }
  const ToolSpec echo{"echo",
                      "Returns its text argument.",
                      {{"type", "object"},
                       {"properties", {{"text", {{"type", "string"}}}}},
                       {"required", {"text"}}}};
  std::vector<Message> conversation = {
      text_message("user", "Call the echo tool with the text \"probe\". Do not answer in prose.")};
  try {
    const auto reply = client.complete(conversation, {echo});
    const bool called = !reply.message.tool_calls.empty();
    rows.push_back({"tool calls", called,
                    called
                        ? fmt::format("{}({})", reply.message.tool_calls[0].name,
                                      reply.message.tool_calls[0].arguments.substr(0, 80))
                        : "answered without a tool call: " + reply.message.content.substr(0, 80)});
    rows.push_back({"reasoning returned", !reply.message.reasoning.empty(),
                    reply.message.reasoning.empty()
                        ? "none (a model without reasoning, or a server that hides it)"
                        : fmt::format("{} characters{}", reply.message.reasoning.size(),
                                      reply.message.reasoning_field.empty()
                                          ? ""
                                          : " in " + reply.message.reasoning_field)});
    if (called) {
      conversation.push_back(reply.message);
      Message result;
      result.role = "tool";
      result.tool_call_id = reply.message.tool_calls[0].id;
      result.tool_name = reply.message.tool_calls[0].name;
      result.content = "probe";
      conversation.push_back(result);
      client.complete(conversation, {echo});
      rows.push_back({"tool result and reasoning accepted back", true,
                      reply.message.reasoning.empty() ? "tool result accepted"
                                                      : "tool result and reasoning accepted"});
    }
  } catch (const ModelError& error) {
    rows.push_back(
        {"tool calls", false, fmt::format("{}: {}", model_error_name(error.kind), error.what())});
  }
  return rows;
}

} // namespace kbench::agent
