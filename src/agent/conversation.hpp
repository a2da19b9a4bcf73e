#pragma once
// A conversation with a model, independent of the wire protocol (agent/chat_protocol.hpp,
// agent/responses_protocol.hpp turn it into requests and read replies back), and what a reply
// holds: text, the reasoning the server returned (and must get back where its protocol says
// so), tool calls, token usage, and whether it was cut short.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kbench::agent {

struct ToolCall {
  std::string id; // the server's call id, echoed with the result
  std::string name;
  std::string arguments; // as the server sent them: JSON text, which may be malformed
};

struct Message {
  std::string role; // system, user, assistant, tool
  std::string content;
  // assistant: the reasoning text, and the protocol's own items to send back
  // (Responses: reasoning items with encrypted_content), as the server gave them
  std::string reasoning;
  std::string
      reasoning_field; // Chat Completions: the field it came in (reasoning_content, reasoning)
  nlohmann::json reasoning_items = nlohmann::json::array();
  std::vector<ToolCall> tool_calls; // assistant
  std::string tool_call_id;         // tool: which call this answers
  std::string tool_name;            // tool
};

// A plain message of `role` (system, user) with `content`.
Message text_message(std::string role, std::string content);

nlohmann::json to_json(const Message& message);
Message message_from_json(const nlohmann::json& value);

struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json parameters; // JSON schema of the arguments object
};

struct Usage {
  long long input = 0, cached = 0, output = 0, reasoning = 0;
  long long total() const { return input + output; }
};
nlohmann::json to_json(const Usage& usage);

struct ModelReply {
  Message message; // role assistant
  std::string finish_reason;
  bool truncated = false; // the server stopped at its output limit
  Usage usage;
  nlohmann::json request; // the last request body sent
  std::string raw;        // the last response body as received
  double latency_s = 0;   // the successful call's
  double total_s = 0;     // every attempt and wait included
  int attempts = 0;
  std::vector<std::string> retried; // one line per retried attempt: what happened
};

} // namespace kbench::agent
