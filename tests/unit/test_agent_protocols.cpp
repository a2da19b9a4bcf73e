// Covers src/agent/wire_protocols.cpp, the backoff of src/agent/model_client.cpp, the tiers and
// the argument checks of src/agent/tools.cpp, and src/agent/prompts.cpp: requests in both
// protocols (tools, tool results, reasoning sent back in the field or item it came in), replies
// read back (reasoning, tool calls, usage, truncation), bad replies as errors with an excerpt.
#include "agent/model_client.hpp"
#include "agent/prompts.hpp"
#include "agent/tools.hpp"
#include "agent/wire_protocols.hpp"

#include <gtest/gtest.h>

namespace kbench::agent {
namespace {

using json = nlohmann::json;

std::vector<Message> conversation() {
  Message assistant;
  assistant.role = "assistant";
  assistant.reasoning = "think";
  assistant.reasoning_field = "reasoning_content";
  assistant.reasoning_items =
      json::array({{{"type", "reasoning"}, {"id", "rs_0"}, {"encrypted_content", "enc"}}});
  assistant.tool_calls = {{"call_1", "compile_kernel", "{\"kernel_code\": \"x\"}"}};
  Message tool;
  tool.role = "tool";
  tool.tool_call_id = "call_1";
  tool.tool_name = "compile_kernel";
  tool.content = "compile_kernel: compiled (1.0 s).";
  return {text_message("system", "be fast"), text_message("user", "the task"), assistant, tool};
}

const std::vector<ToolSpec> kTools = {{"compile_kernel", "builds", {{"type", "object"}}}};

TEST(AgentProtocols, ChatRequestsCarryToolsResultsAndTheReasoningInItsField) {
  const json body = build_request(Api::chat, "m", conversation(), kTools, {{"max_tokens", 100}});
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["max_tokens"], 100);
  EXPECT_EQ(body["tools"][0]["function"]["name"], "compile_kernel");
  const auto& messages = body["messages"];
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[2]["reasoning_content"], "think");
  EXPECT_TRUE(messages[2]["content"].is_null());
  EXPECT_EQ(messages[2]["tool_calls"][0]["function"]["arguments"], "{\"kernel_code\": \"x\"}");
  EXPECT_EQ(messages[3]["role"], "tool");
  EXPECT_EQ(messages[3]["tool_call_id"], "call_1");
}

TEST(AgentProtocols, ResponsesRequestsSendReasoningItemsBackWhole) {
  const json body = build_request(Api::responses, "m", conversation(), kTools, json::object());
  EXPECT_EQ(body["instructions"], "be fast");
  EXPECT_EQ(body["store"], false);
  EXPECT_EQ(body["include"][0], "reasoning.encrypted_content");
  EXPECT_EQ(body["tools"][0]["name"], "compile_kernel");
  const auto& input = body["input"];
  ASSERT_EQ(input.size(), 4u);
  EXPECT_EQ(input[0]["role"], "user");
  EXPECT_EQ(input[1]["encrypted_content"], "enc");
  EXPECT_EQ(input[2]["type"], "function_call");
  EXPECT_EQ(input[2]["call_id"], "call_1");
  EXPECT_EQ(input[3]["type"], "function_call_output");
}

TEST(AgentProtocols, RepliesAreReadInBothProtocols) {
  const auto chat = parse_reply(
      Api::chat,
      json{{"choices",
            {{{"finish_reason", "length"},
              {"message",
               {{"content", nullptr},
                {"reasoning", "hmm"},
                {"tool_calls",
                 {{{"id", "c1"},
                   {"function",
                    {{"name", "submit_kernel"}, {"arguments", {{"kernel_code", "k"}}}}}}}}}}}}},
           {"usage",
            {{"prompt_tokens", 10},
             {"completion_tokens", 5},
             {"prompt_tokens_details", {{"cached_tokens", 4}}},
             {"completion_tokens_details", {{"reasoning_tokens", 3}}}}}}
          .dump());
  EXPECT_EQ(chat.message.reasoning, "hmm");
  EXPECT_EQ(chat.message.reasoning_field, "reasoning");
  ASSERT_EQ(chat.message.tool_calls.size(), 1u);
  EXPECT_EQ(chat.message.tool_calls[0].arguments,
            "{\"kernel_code\":\"k\"}"); // an object, written out
  EXPECT_TRUE(chat.truncated);
  EXPECT_EQ(chat.usage.input, 10);
  EXPECT_EQ(chat.usage.cached, 4);
  EXPECT_EQ(chat.usage.reasoning, 3);

  const auto responses = parse_reply(
      Api::responses, json{{"status", "completed"},
                           {"output",
                            {{{"type", "reasoning"},
                              {"id", "rs"},
                              {"summary", {{{"type", "summary_text"}, {"text", "plan"}}}},
                              {"encrypted_content", "e"}},
                             {{"type", "message"},
                              {"role", "assistant"},
                              {"content", {{{"type", "output_text"}, {"text", "hi"}}}}},
                             {{"type", "function_call"},
                              {"call_id", "c9"},
                              {"name", "static_check"},
                              {"arguments", "{}"}}}},
                           {"usage", {{"input_tokens", 7}, {"output_tokens", 2}}}}
                          .dump());
  EXPECT_EQ(responses.message.reasoning, "plan");
  EXPECT_EQ(responses.message.reasoning_items.size(), 1u);
  EXPECT_EQ(responses.message.content, "hi");
  EXPECT_EQ(responses.message.tool_calls.at(0).id, "c9");
  EXPECT_EQ(responses.finish_reason, "tool_calls");
  EXPECT_EQ(responses.usage.total(), 9);
}

TEST(AgentProtocols, ABadReplyIsAnErrorWithAnExcerpt) {
  EXPECT_THROW(parse_reply(Api::chat, "<html>gateway</html>"), BadReply);
  EXPECT_THROW(parse_reply(Api::chat, "{\"choices\": []}"), BadReply);
  EXPECT_THROW(parse_reply(Api::responses, "{\"output\": 3}"), BadReply);
  try {
    parse_reply(Api::chat, "{\"object\": \"error\"}");
    FAIL();
  } catch (const BadReply& error) {
    EXPECT_NE(std::string(error.what()).find("\"object\""), std::string::npos) << error.what();
  }
  EXPECT_EQ(error_message("{\"error\": {\"message\": \"slow down\"}}"), "slow down");
  EXPECT_EQ(error_message("plain text"), "plain text");
}

TEST(AgentProtocols, BackoffGrowsHasJitterIsCappedAndHonoursRetryAfter) {
  Endpoint endpoint;
  endpoint.backoff_base_s = 1;
  endpoint.backoff_cap_s = 8;
  for (int i = 0; i < 50; ++i) {
    const double first = backoff_seconds(endpoint, 0, 0);
    EXPECT_GE(first, 0.5);
    EXPECT_LE(first, 1.5);
    EXPECT_LE(backoff_seconds(endpoint, 10, 0), 12.0);
  }
  EXPECT_GE(backoff_seconds(endpoint, 0, 30), 30.0);
  Endpoint chat;
  chat.url = "http://h/v1/";
  EXPECT_EQ(ModelClient(chat).url(), "http://h/v1/chat/completions");
  Endpoint responses;
  responses.url = "http://h";
  responses.api = Api::responses;
  EXPECT_EQ(ModelClient(responses).url(), "http://h/v1/responses");
}

TEST(AgentProtocols, TiersAndTheirTools) {
  EXPECT_EQ(tier_named("single").tools, std::vector<std::string>{"submit_kernel"});
  EXPECT_EQ(tier_named("default").max_turns, 10);
  EXPECT_EQ(tier_named("all").max_tool_calls, 50);
  EXPECT_EQ(tier_named("all").tools.size(), 7u);
  EXPECT_THROW(tier_named("huge"), std::invalid_argument);
  ToolBox tools({}, tier_named("single").tools);
  ASSERT_EQ(tools.specs().size(), 1u);
  // Arguments are untrusted: nothing runs, and the model reads why.
  EXPECT_NE(tools.call({"1", "compile_kernel", "{}"}).text.find("no tool \"compile_kernel\""),
            std::string::npos);
  EXPECT_NE(tools.call({"2", "submit_kernel", "[1, 2]"}).text.find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(
      tools.call({"3", "submit_kernel", "{\"kernel_code\": 5}"}).text.find("needs \"kernel_code\""),
      std::string::npos);
}

TEST(AgentProtocols, PromptsFillTheirPlaceholdersAndKeepOtherBraces) {
  const Prompts prompts;
  const std::string system = prompts.render("system", {{"backend", "CUDA"},
                                                       {"max_turns", "10"},
                                                       {"max_tool_calls", "30"},
                                                       {"tools", "`submit_kernel`"},
                                                       {"precision", "fp32"},
                                                       {"tolerance", "1e-4"}});
  EXPECT_NE(system.find("10 turns and 30 tool calls"), std::string::npos) << system;
  EXPECT_EQ(system.find("{max_turns}"), std::string::npos);
  const std::string task = prompts.render("task", {{"reference_source", "x = {1: 2}"}});
  EXPECT_NE(task.find("x = {1: 2}"), std::string::npos);
}

} // namespace
} // namespace kbench::agent
