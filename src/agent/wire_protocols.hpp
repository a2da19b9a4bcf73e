#pragma once
// The two wire protocols a model server may speak, as pure functions from a conversation to a
// request body and from a response body to a reply, so that tests/unit/test_agent_protocols.cpp
// checks them without a server:
// - OpenAI Chat Completions (`POST /v1/chat/completions`): OpenAI, vLLM, SGLang, OpenRouter,
//   DeepSeek, Kimi, Azure and most others. Reasoning comes in `reasoning_content` (DeepSeek,
//   Kimi) or `reasoning` (vLLM, OpenRouter); it goes back in the field it came in, which
//   DeepSeek's thinking mode requires on tool-call turns (it answers 400 otherwise).
// - OpenAI Responses (`POST /v1/responses`), with `store: false`: the reasoning items come back
//   with `encrypted_content` (include=["reasoning.encrypted_content"]) and are sent again, whole,
//   before the turn they belong to.
#include "agent/conversation.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace kbench::agent {

enum class Api { chat, responses };
const char* api_name(Api api);
// "/v1/chat/completions" or "/v1/responses", appended to the endpoint's base URL.
const char* api_path(Api api);

// A response body that is not what the protocol says (not JSON, no choices, no output).
struct BadReply : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlohmann::json build_request(Api api, const std::string& model,
                             const std::vector<Message>& messages,
                             const std::vector<ToolSpec>& tools, const nlohmann::json& extra);
// Throws BadReply with an excerpt of the body.
ModelReply parse_reply(Api api, const std::string& body);

// The message of an error body ({"error": {"message": ...}}, or the body shortened).
std::string error_message(const std::string& body);

} // namespace kbench::agent
