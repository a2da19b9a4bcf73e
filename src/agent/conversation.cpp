#include "agent/conversation.hpp"

namespace kbench::agent {

Message text_message(std::string role, std::string content) {
  Message message;
  message.role = std::move(role);
  message.content = std::move(content);
  return message;
}

nlohmann::json to_json(const Message& m) {
  nlohmann::json calls = nlohmann::json::array();
  for (const auto& call : m.tool_calls) {
    calls.push_back({{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
  }
  nlohmann::json out = {{"role", m.role}, {"content", m.content}};
  if (!m.reasoning.empty()) {
    out["reasoning"] = m.reasoning;
    out["reasoning_field"] = m.reasoning_field;
  }
  if (!m.reasoning_items.empty()) {
    out["reasoning_items"] = m.reasoning_items;
  }
  if (!calls.empty()) {
    out["tool_calls"] = calls;
  }
  if (!m.tool_call_id.empty()) {
    out["tool_call_id"] = m.tool_call_id;
    out["tool_name"] = m.tool_name;
  }
  return out;
}

Message message_from_json(const nlohmann::json& v) {
  Message m;
  m.role = v.value("role", "");
  m.content = v.value("content", "");
  m.reasoning = v.value("reasoning", "");
  m.reasoning_field = v.value("reasoning_field", "");
  m.reasoning_items = v.value("reasoning_items", nlohmann::json::array());
  for (const auto& call : v.value("tool_calls", nlohmann::json::array())) {
    m.tool_calls.push_back(
        {call.value("id", ""), call.value("name", ""), call.value("arguments", "")});
  }
  m.tool_call_id = v.value("tool_call_id", "");
  m.tool_name = v.value("tool_name", "");
  return m;
}

nlohmann::json to_json(const Usage& u) {
  return {
      {"input", u.input}, {"cached", u.cached}, {"output", u.output}, {"reasoning", u.reasoning}};
}

} // namespace kbench::agent
