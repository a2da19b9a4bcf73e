#pragma once
// The built-in replay model (`kbench agent --model replay:FILE`): a recorded conversation's
// assistant turns played through the same loop, tools, budgets, trace and store as a model
// server, with no network. The tools really run: what the recording asks for is compiled,
// checked and evaluated now. FILE is one of:
//   - a recording: {"turns": [{"content", "reasoning", "tool_calls": [{"id", "name",
//     "arguments"}], "usage": {"input", "output", "cached", "reasoning"}, "finish_reason"}]}
//     (the format of tests/fakes/scenarios/; `arguments` a JSON text or an object);
//   - `kbench export-trace RUN --format jsonl` or `--format hf` output, so any stored run can be
//     played again against a new kbench build.
// A recorded turn that no longer fits (a tool that does not exist, arguments the schema
// rejects) is played as it is, and gets the error result a model would get.
#include "agent/conversation.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace kbench::agent {

struct RecordedTurn {
  Message message; // role assistant
  Usage usage;
  std::string finish_reason;
};

struct Recording {
  std::filesystem::path file;
  std::string format; // "recording", "trace" (export-trace jsonl) or "hf"
  std::vector<RecordedTurn> turns;
};

// Throws std::runtime_error naming the file, the line or turn, the field, and what to do.
Recording load_recording(const std::filesystem::path& file);

// The reply to a conversation that holds `messages`: the recording's turn after the assistant
// turns already in it (so a resumed run goes on where it stopped). Throws ModelError
// (rejected) when the recording has no turn left.
ModelReply replay_reply(const Recording& recording, const std::vector<Message>& messages);

} // namespace kbench::agent
