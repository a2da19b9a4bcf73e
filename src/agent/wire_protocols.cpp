#include "agent/wire_protocols.hpp"

#include <fmt/format.h>

namespace kbench::agent {
namespace {

std::string excerpt(const std::string& body) {
  return body.size() > 300 ? body.substr(0, 300) + "..." : body;
}

// Arguments normally come as JSON text; a server that sends an object gets it written out.
std::string arguments_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

long long number(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_number_integer() ? found->get<long long>() : 0;
}

nlohmann::json chat_message(const Message& m) {
  if (m.role == "tool") {
    return {{"role", "tool"}, {"tool_call_id", m.tool_call_id}, {"content", m.content}};
  }
  if (m.role != "assistant") {
    return {{"role", m.role}, {"content", m.content}};
  }
  // null content only beside tool calls: an assistant message needs one or the other
  nlohmann::json out = {{"role", "assistant"},
                        {"content", m.content.empty() && !m.tool_calls.empty()
                                        ? nlohmann::json(nullptr)
                                        : nlohmann::json(m.content)}};
  if (!m.tool_calls.empty()) {
    out["tool_calls"] = nlohmann::json::array();
    for (const auto& call : m.tool_calls) {
      out["tool_calls"].push_back(
          {{"id", call.id},
           {"type", "function"},
           {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
    }
  }
  if (!m.reasoning.empty() && !m.reasoning_field.empty()) {
    out[m.reasoning_field] = m.reasoning;
  }
  return out;
}

ModelReply parse_chat(const nlohmann::json& body) {
  const auto choices = body.find("choices");
  if (choices == body.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].contains("message")) {
    throw BadReply("no choices[0].message in the answer");
  }
  const auto& choice = (*choices)[0];
  const auto& message = choice["message"];
  ModelReply reply;
  reply.message.role = "assistant";
  if (message.contains("content") && message["content"].is_string()) {
    reply.message.content = message["content"];
  }
  for (const char* field : {"reasoning_content", "reasoning"}) {
    if (message.contains(field) && message[field].is_string() &&
        !message[field].get<std::string>().empty()) {
      reply.message.reasoning = message[field];
      reply.message.reasoning_field = field;
      break;
    }
  }
  for (const auto& call : message.value("tool_calls", nlohmann::json::array())) {
    const auto function = call.value("function", nlohmann::json::object());
    reply.message.tool_calls.push_back(
        {call.value("id", ""), function.value("name", ""),
         arguments_text(function.value("arguments", nlohmann::json("")))});
  }
  reply.finish_reason = choice.value("finish_reason", "");
  reply.truncated = reply.finish_reason == "length";
  if (const auto usage = body.find("usage"); usage != body.end() && usage->is_object()) {
    reply.usage.input = number(*usage, "prompt_tokens");
    reply.usage.output = number(*usage, "completion_tokens");
    reply.usage.cached =
        number(usage->value("prompt_tokens_details", nlohmann::json::object()), "cached_tokens");
    reply.usage.reasoning = number(
        usage->value("completion_tokens_details", nlohmann::json::object()), "reasoning_tokens");
  }
  return reply;
}

nlohmann::json responses_input(const std::vector<Message>& messages) {
  nlohmann::json input = nlohmann::json::array();
  for (const auto& m : messages) {
    if (m.role == "system") {
      continue; // sent as `instructions`
    }
    if (m.role == "tool") {
      input.push_back(
          {{"type", "function_call_output"}, {"call_id", m.tool_call_id}, {"output", m.content}});
    } else if (m.role == "assistant") {
      for (const auto& item : m.reasoning_items) {
        input.push_back(item);
      }
      if (!m.content.empty()) {
        input.push_back({{"role", "assistant"}, {"content", m.content}});
      }
      for (const auto& call : m.tool_calls) {
        input.push_back({{"type", "function_call"},
                         {"call_id", call.id},
                         {"name", call.name},
                         {"arguments", call.arguments}});
      }
    } else {
      input.push_back({{"role", m.role}, {"content", m.content}});
    }
  }
  return input;
}

ModelReply parse_responses(const nlohmann::json& body) {
  const auto output = body.find("output");
  if (output == body.end() || !output->is_array()) {
    throw BadReply("no output array in the answer");
  }
  ModelReply reply;
  reply.message.role = "assistant";
  for (const auto& item : *output) {
    const std::string type = item.value("type", "");
    if (type == "reasoning") {
      // Sent back as the server gave it: its id, summary and encrypted_content.
      reply.message.reasoning_items.push_back(item);
      for (const char* part : {"summary", "content"}) {
        for (const auto& piece : item.value(part, nlohmann::json::array())) {
          if (piece.contains("text") && piece["text"].is_string()) {
            reply.message.reasoning +=
                (reply.message.reasoning.empty() ? "" : "\n") + piece["text"].get<std::string>();
          }
        }
      }
    } else if (type == "message") {
      for (const auto& piece : item.value("content", nlohmann::json::array())) {
        if (piece.value("type", "") == "output_text" && piece.contains("text")) {
          reply.message.content += piece["text"].get<std::string>();
        }
      }
    } else if (type == "function_call") {
      reply.message.tool_calls.push_back(
          {item.value("call_id", item.value("id", "")), item.value("name", ""),
           arguments_text(item.value("arguments", nlohmann::json("")))});
    }
  }
  const auto details = body.value("incomplete_details", nlohmann::json());
  reply.truncated = body.value("status", "") == "incomplete" && details.is_object() &&
                    details.value("reason", "") == "max_output_tokens";
  reply.finish_reason =
      reply.truncated ? "length" : (reply.message.tool_calls.empty() ? "stop" : "tool_calls");
  if (const auto usage = body.find("usage"); usage != body.end() && usage->is_object()) {
    reply.usage.input = number(*usage, "input_tokens");
    reply.usage.output = number(*usage, "output_tokens");
    reply.usage.cached =
        number(usage->value("input_tokens_details", nlohmann::json::object()), "cached_tokens");
    reply.usage.reasoning =
        number(usage->value("output_tokens_details", nlohmann::json::object()), "reasoning_tokens");
  }
  return reply;
}

} // namespace

const char* api_name(Api api) {
  return api == Api::chat ? "chat" : "responses";
}

const char* api_path(Api api) {
  return api == Api::chat ? "/v1/chat/completions" : "/v1/responses";
}

nlohmann::json build_request(Api api, const std::string& model,
                             const std::vector<Message>& messages,
                             const std::vector<ToolSpec>& tools, const nlohmann::json& extra) {
  nlohmann::json body = {{"model", model}};
  nlohmann::json specs = nlohmann::json::array();
  for (const auto& tool : tools) {
    specs.push_back(api == Api::chat ? nlohmann::json{{"type", "function"},
                                                      {"function",
                                                       {{"name", tool.name},
                                                        {"description", tool.description},
                                                        {"parameters", tool.parameters}}}}
                                     : nlohmann::json{{"type", "function"},
                                                      {"name", tool.name},
                                                      {"description", tool.description},
                                                      {"parameters", tool.parameters}});
  }
  if (!specs.empty()) {
    body["tools"] = specs;
  }
  if (api == Api::chat) {
    body["messages"] = nlohmann::json::array();
    for (const auto& m : messages) {
      body["messages"].push_back(chat_message(m));
    }
  } else {
    for (const auto& m : messages) {
      if (m.role == "system") {
        body["instructions"] = m.content;
      }
    }
    body["input"] = responses_input(messages);
    body["store"] = false;
    body["include"] = nlohmann::json::array({"reasoning.encrypted_content"});
  }
  if (extra.is_object()) {
    body.update(extra);
  }
  return body;
}

ModelReply parse_reply(Api api, const std::string& body) {
  const auto document = nlohmann::json::parse(body, nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    throw BadReply("the answer is not a JSON object: " + excerpt(body));
  }
  try {
    return api == Api::chat ? parse_chat(document) : parse_responses(document);
  } catch (const BadReply& error) {
    throw BadReply(std::string(error.what()) + ": " + excerpt(body));
  } catch (const nlohmann::json::exception& error) {
    throw BadReply(std::string("a field of the wrong type (") + error.what() +
                   "): " + excerpt(body));
  }
}

std::string error_message(const std::string& body) {
  const auto document = nlohmann::json::parse(body, nullptr, false);
  if (document.is_object()) {
    const auto error = document.find("error");
    if (error != document.end()) {
      if (error->is_object() && error->contains("message") && (*error)["message"].is_string()) {
        return (*error)["message"];
      }
      if (error->is_string()) {
        return *error;
      }
    }
    if (document.contains("message") && document["message"].is_string()) {
      return document["message"];
    }
  }
  return excerpt(body);
}

} // namespace kbench::agent
