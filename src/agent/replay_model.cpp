#include "agent/replay_model.hpp"

#include "agent/model_client.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace kbench::agent {
namespace {

[[noreturn]] void refuse(const Recording& recording, const std::string& where,
                         const std::string& what) {
  throw std::runtime_error(fmt::format(
      "{}: {}: {} (a replay file is a recording {{\"turns\": [...]}}, or the output of kbench "
      "export-trace RUN --format jsonl|hf: docs/agent.md)",
      recording.file.string(), where, what));
}

std::string text_field(const Recording& recording, const std::string& where,
                       const nlohmann::json& object, const char* key) {
  if (!object.contains(key) || object[key].is_null()) {
    return "";
  }
  if (!object[key].is_string()) {
    refuse(recording, where,
           fmt::format("\"{}\" must be a string, not {}", key, object[key].type_name()));
  }
  return object[key].get<std::string>();
}

Usage usage_of(const Recording& recording, const std::string& where, const nlohmann::json& usage) {
  Usage out;
  if (usage.is_null()) {
    return out;
  }
  if (!usage.is_object()) {
    refuse(recording, where, "\"usage\" must be an object of token counts");
  }
  for (auto [key, field] :
       {std::pair{"input", &out.input}, std::pair{"output", &out.output},
        std::pair{"cached", &out.cached}, std::pair{"reasoning", &out.reasoning}}) {
    if (usage.contains(key) && !usage[key].is_null()) {
      if (!usage[key].is_number_integer() || usage[key].get<long long>() < 0) {
        refuse(recording, where, fmt::format("\"usage.{}\" must be a whole number of tokens", key));
      }
      *field = usage[key].get<long long>();
    }
  }
  return out;
}

// A tool call as recorded: arguments may be JSON text (kept as sent, malformed or not) or an
// object; the id is made up where the recording has none.
ToolCall call_of(const Recording& recording, const std::string& where, const nlohmann::json& call,
                 std::size_t turn, std::size_t index) {
  if (!call.is_object()) {
    refuse(recording, where, "each tool call must be an object with \"name\" and \"arguments\"");
  }
  ToolCall out;
  out.id = text_field(recording, where, call, "id");
  if (out.id.empty()) {
    out.id = fmt::format("call_{}_{}", turn, index);
  }
  out.name = text_field(recording, where, call, "name");
  if (out.name.empty()) {
    refuse(recording, where, "a tool call has no \"name\"");
  }
  const auto& arguments =
      call.contains("arguments") ? call["arguments"] : call.value("input", nlohmann::json());
  out.arguments = arguments.is_string() ? arguments.get<std::string>()
                  : arguments.is_null() ? "{}"
                                        : arguments.dump();
  return out;
}

void read_recording(Recording& recording, const nlohmann::json& document) {
  if (!document.contains("turns") || !document["turns"].is_array()) {
    refuse(recording, "the top level", "no \"turns\" array");
  }
  for (std::size_t t = 0; t < document["turns"].size(); ++t) {
    const auto& turn = document["turns"][t];
    const std::string where = fmt::format("turn {}", t);
    if (!turn.is_object()) {
      refuse(recording, where, "a turn must be an object");
    }
    RecordedTurn out;
    out.message.role = "assistant";
    out.message.content = text_field(recording, where, turn, "content");
    out.message.reasoning = text_field(recording, where, turn, "reasoning");
    const auto calls = turn.value("tool_calls", nlohmann::json::array());
    if (!calls.is_array()) {
      refuse(recording, where, "\"tool_calls\" must be an array");
    }
    for (std::size_t k = 0; k < calls.size(); ++k) {
      out.message.tool_calls.push_back(call_of(recording, where, calls[k], t, k));
    }
    out.usage = usage_of(recording, where, turn.value("usage", nlohmann::json()));
    out.finish_reason = text_field(recording, where, turn, "finish_reason");
    if (out.finish_reason.empty()) {
      out.finish_reason = out.message.tool_calls.empty() ? "stop" : "tool_calls";
    }
    recording.turns.push_back(std::move(out));
  }
}

// kbench export-trace --format jsonl: the assistant messages in order, each turn's usage.
void read_trace_line(Recording& recording, const std::string& where, const nlohmann::json& line,
                     std::map<int, Usage>& usage_by_turn, std::vector<int>& turn_of) {
  const std::string event = line.value("event", "");
  if (event == "message") {
    const auto& message = line.value("message", nlohmann::json::object());
    if (message.value("role", "") != "assistant") {
      return;
    }
    RecordedTurn turn;
    turn.message = message_from_json(message);
    turn.message.role = "assistant";
    for (std::size_t k = 0; k < turn.message.tool_calls.size(); ++k) {
      auto& call = turn.message.tool_calls[k];
      if (call.name.empty()) {
        refuse(recording, where, "an assistant message's tool call has no \"name\"");
      }
      if (call.id.empty()) {
        call.id = fmt::format("call_{}_{}", recording.turns.size(), k);
      }
    }
    turn.finish_reason = turn.message.tool_calls.empty() ? "stop" : "tool_calls";
    turn_of.push_back(line.value("turn", static_cast<int>(recording.turns.size())));
    recording.turns.push_back(std::move(turn));
  } else if (event == "turn") {
    usage_by_turn[line.value("turn", -1)] =
        usage_of(recording, where, line.value("usage", nlohmann::json()));
  }
}

// kbench export-trace --format hf: assistant lines with thinking, text and tool_use items.
void read_hf_line(Recording& recording, const std::string& where, const nlohmann::json& line) {
  if (line.value("type", "") != "assistant") {
    return;
  }
  const auto message = line.value("message", nlohmann::json::object());
  const auto content = message.value("content", nlohmann::json::array());
  RecordedTurn turn;
  turn.message.role = "assistant";
  for (const auto& item : content.is_array() ? content : nlohmann::json::array()) {
    const std::string type = item.value("type", "");
    if (type == "thinking") {
      turn.message.reasoning += text_field(recording, where, item, "thinking");
    } else if (type == "text") {
      turn.message.content += text_field(recording, where, item, "text");
    } else if (type == "tool_use") {
      turn.message.tool_calls.push_back(
          call_of(recording, where, item, recording.turns.size(), turn.message.tool_calls.size()));
    }
  }
  turn.finish_reason = turn.message.tool_calls.empty() ? "stop" : "tool_calls";
  recording.turns.push_back(std::move(turn));
}

} // namespace

Recording load_recording(const std::filesystem::path& file) {
  Recording recording;
  recording.file = file;
  std::ifstream in(file);
  if (!in) {
    throw std::runtime_error(fmt::format("{}: cannot be read (--model replay:FILE names a "
                                         "recording or an exported trace)",
                                         file.string()));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const auto whole = nlohmann::json::parse(text, nullptr, false);
  if (!whole.is_discarded() && whole.is_object() && whole.contains("turns")) {
    recording.format = "recording";
    read_recording(recording, whole);
  } else {
    std::istringstream lines(text);
    std::map<int, Usage> usage_by_turn;
    std::vector<int> turn_of;
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) {
        continue;
      }
      const std::string where = fmt::format("line {}", number);
      const auto value = nlohmann::json::parse(line, nullptr, false);
      if (value.is_discarded() || !value.is_object()) {
        refuse(recording, where, "not a JSON object");
      }
      if (recording.format.empty()) {
        recording.format = value.contains("event") ? "trace" : value.contains("type") ? "hf" : "";
        if (recording.format.empty()) {
          refuse(recording, where,
                 "neither a recording nor a trace line (no \"event\" or \"type\")");
        }
      }
      if (recording.format == "trace") {
        read_trace_line(recording, where, value, usage_by_turn, turn_of);
      } else {
        read_hf_line(recording, where, value);
      }
    }
    for (std::size_t t = 0; t < recording.turns.size(); ++t) {
      if (const auto found = usage_by_turn.find(turn_of.empty() ? -1 : turn_of[t]);
          found != usage_by_turn.end()) {
        recording.turns[t].usage = found->second;
      }
    }
  }
  if (recording.turns.empty()) {
    refuse(recording, "the whole file", "no assistant turn to play");
  }
  return recording;
}

ModelReply replay_reply(const Recording& recording, const std::vector<Message>& messages) {
  std::size_t played = 0;
  for (const auto& message : messages) {
    played += message.role == "assistant";
  }
  if (played >= recording.turns.size()) {
    throw ModelError(ModelErrorKind::rejected, 0,
                     fmt::format("replay {}: the recording has {} turn(s), and the run asked for "
                                 "turn {}: it ends without a submission",
                                 recording.file.string(), recording.turns.size(), played + 1));
  }
  const RecordedTurn& turn = recording.turns[played];
  ModelReply reply;
  reply.message = turn.message;
  reply.finish_reason = turn.finish_reason;
  reply.truncated = turn.finish_reason == "length";
  reply.usage = turn.usage;
  reply.request = {
      {"replay", recording.file.string()}, {"format", recording.format}, {"turn", played}};
  reply.raw = to_json(turn.message).dump();
  reply.attempts = 1;
  return reply;
}

} // namespace kbench::agent
