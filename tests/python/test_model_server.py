"""tests/fakes/model_server.py: the scripted OpenAI-compatible server `kbench agent`'s tests use.

Each test starts the real script as a subprocess on port 0 and talks to it with urllib, as the
agent runner would; the turn-index rules are also checked directly on the imported functions.
"""

import http.client
import json
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parents[1] / "fakes"
SCRIPT = FAKES / "model_server.py"
ECHO = FAKES / "scenarios" / "echo_tools.json"

sys.path.insert(0, str(FAKES))
import model_server  # noqa: E402

# The environment may name an HTTP proxy; the server is on loopback.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

USER = {"role": "user", "content": "echo hello"}


class Server:
    def __init__(self, proc, url):
        self.proc = proc
        self.url = url
        self.port = int(url.rsplit(":", 1)[1])

    def call(self, path, body=None, headers=None, timeout=10, raw=None):
        """(status, headers, parsed JSON) of one request; a GET when there is no body."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, data=data,
                                         headers={"Content-Type": "application/json",
                                                  **(headers or {})})
        try:
            with _OPENER.open(request, timeout=timeout) as response:
                return response.status, response.headers, json.loads(response.read())
        except urllib.error.HTTPError as e:
            return e.code, e.headers, json.loads(e.read())

    def chat(self, messages, **extra):
        return self.call("/v1/chat/completions",
                         {"model": "scripted", "messages": messages, **extra})

    def responses(self, items, **extra):
        return self.call("/v1/responses", {"model": "scripted", "input": items, **extra})


def _start(scenario_path, args, stderr_path):
    with open(stderr_path, "w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), "--scenario", str(scenario_path), "--port", "0",
             *args], stdout=subprocess.PIPE, stderr=stderr, text=True)
    ready, _, _ = select.select([proc.stdout], [], [], 10)
    line = proc.stdout.readline() if ready else ""
    prefix = "model server listening on http://127.0.0.1:"
    if not line.startswith(prefix):
        proc.kill()
        pytest.fail(f"no listening line: {line!r}; stderr: {Path(stderr_path).read_text()}")
    return Server(proc, line.strip().removeprefix("model server listening on "))


@pytest.fixture
def serve(tmp_path):
    """serve(scenario dict or path, *args) -> a running Server, stopped (SIGTERM) at the end."""
    servers = []

    def start(scenario=ECHO, *args):
        if isinstance(scenario, dict):
            path = tmp_path / f"scenario{len(servers)}.json"
            path.write_text(json.dumps(scenario))
            scenario = path
        server = _start(scenario, args, tmp_path / f"stderr{len(servers)}.txt")
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=5) == 0


def one_turn(**turn):
    return {"turns": [turn]}


def assistant_from_chat(answer):
    """The assistant message a client appends to its history, reasoning included."""
    return answer["choices"][0]["message"]


def tool_results_chat(message):
    return [{"role": "tool", "tool_call_id": c["id"], "content": "ok"}
            for c in message.get("tool_calls", [])]


def tool_results_responses(output):
    return [{"type": "function_call_output", "call_id": item["call_id"], "output": "ok"}
            for item in output if item["type"] == "function_call"]


# ----------------------------------------------------------------------- process, basics

def test_listening_line_and_models_list(serve):
    server = serve()
    for path in ("/v1/models", "/models"):
        status, _, body = server.call(path)
        assert status == 200
        assert body["object"] == "list"
        assert body["data"][0]["id"] == "scripted" and body["data"][0]["object"] == "model"


def test_model_option_names_the_model(serve):
    server = serve(ECHO, "--model", "deepseek-reasoner")
    assert server.call("/v1/models")[2]["data"][0]["id"] == "deepseek-reasoner"
    status, _, body = server.call("/v1/chat/completions",
                                  {"model": "deepseek-reasoner", "messages": [USER]})
    assert status == 200 and body["model"] == "deepseek-reasoner"


def test_sigint_stops_it_too(tmp_path):
    server = _start(ECHO, [], tmp_path / "stderr.txt")
    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(timeout=5) == 0


def test_refuses_a_non_loopback_host():
    result = subprocess.run([sys.executable, str(SCRIPT), "--scenario", str(ECHO),
                             "--host", "0.0.0.0"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 2
    assert result.stdout == "" and "loopback" in result.stderr


def test_an_invalid_scenario_exits_2_naming_the_key(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"turns": [{"tool_call": []}]}))
    result = subprocess.run([sys.executable, str(SCRIPT), "--scenario", str(path)],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode == 2 and "turns[0]" in result.stderr and "tool_call" in result.stderr


def test_unknown_path_and_malformed_json(serve):
    server = serve()
    status, _, body = server.call("/v1/completions", {"model": "scripted"})
    assert status == 404 and "error" in body
    status, _, body = server.call("/v1/chat/completions", raw=b'{"model": "scripted", ')
    assert status == 400 and body["error"]["type"] == "invalid_request_error"
    status, _, body = server.call("/v1/responses", raw=b"[1, 2]")
    assert status == 400 and "error" in body


def test_streaming_and_previous_response_id_are_refused(serve):
    server = serve()
    assert server.chat([USER], stream=True)[0] == 400
    status, _, body = server.responses([USER], previous_response_id="resp_1")
    assert status == 400 and "previous_response_id" in body["error"]["message"]


# ----------------------------------------------------------------- turns, both protocols

def test_chat_plays_the_turns_in_order(serve):
    server = serve()
    messages = [{"role": "system", "content": "be brief"}, USER]

    status, _, first = server.chat(messages)
    assert status == 200
    assert first["object"] == "chat.completion" and first["id"].startswith("chatcmpl-")
    choice = first["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["role"] == "assistant" and message["content"] == "Let me call the echo tool."
    assert message["reasoning_content"].startswith("The user wants")
    assert message["tool_calls"] == [{"id": "call_echo_1", "type": "function", "function": {
        "name": "echo", "arguments": '{"text": "hello"}'}}]
    assert first["usage"] == {"prompt_tokens": 1200, "completion_tokens": 300,
                              "total_tokens": 1500,
                              "prompt_tokens_details": {"cached_tokens": 800},
                              "completion_tokens_details": {"reasoning_tokens": 150}}

    messages += [message, *tool_results_chat(message)]
    status, _, second = server.call("/chat/completions",  # the path without /v1 too
                                    {"model": "scripted", "messages": messages})
    assert status == 200
    final = second["choices"][0]
    assert final["finish_reason"] == "stop"
    assert final["message"]["content"] == "The tool said: hello."
    assert "tool_calls" not in final["message"] and "reasoning_content" not in final["message"]

    messages += [final["message"], {"role": "user", "content": "more?"}]
    over = server.chat(messages)[2]["choices"][0]
    assert over["message"]["content"] == "(scenario over)" and over["finish_reason"] == "stop"


def test_responses_plays_the_turns_in_order(serve):
    server = serve()
    status, _, first = server.responses("echo hello")
    assert status == 200
    assert first["object"] == "response" and first["id"].startswith("resp_")
    assert first["status"] == "completed" and first["incomplete_details"] is None
    reasoning, message, call = first["output"]
    assert reasoning["type"] == "reasoning" and reasoning["id"] == "rs_0"
    assert reasoning["summary"][0]["type"] == "summary_text"
    assert reasoning["summary"][0]["text"].startswith("The user wants")
    assert reasoning["encrypted_content"].startswith("enc-0-")
    assert message == {"type": "message", "id": "msg_0", "role": "assistant",
                       "status": "completed",
                       "content": [{"type": "output_text", "text": "Let me call the echo tool.",
                                    "annotations": []}]}
    assert call == {"type": "function_call", "id": "fc_0_0", "call_id": "call_echo_1",
                    "name": "echo", "arguments": '{"text": "hello"}', "status": "completed"}
    assert first["usage"] == {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 800},
                              "output_tokens": 300,
                              "output_tokens_details": {"reasoning_tokens": 150},
                              "total_tokens": 1500}

    items = [USER, *first["output"], *tool_results_responses(first["output"])]
    status, _, second = server.call("/responses", {"model": "scripted", "input": items})
    assert status == 200
    assert [item["type"] for item in second["output"]] == ["message"]
    assert second["output"][0]["id"] == "msg_1"
    assert second["output"][0]["content"][0]["text"] == "The tool said: hello."

    items += [*second["output"], {"role": "user", "content": "more?"}]
    over = server.responses(items)[2]["output"]
    assert over[0]["content"][0]["text"] == "(scenario over)"


def test_a_resumed_conversation_continues_where_it_was(serve):
    # A fresh server (no memory of earlier requests) plays turn 1 for a turn-1 history.
    server = serve()
    history = [USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_echo_1", "type": "function",
         "function": {"name": "echo", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_echo_1", "content": "hello"}]
    assert server.chat(history)[2]["choices"][0]["message"]["content"] == "The tool said: hello."


def test_finish_reason_length_and_reasoning_field_option(serve):
    server = serve({"reasoning_field": "reasoning",
                    "turns": [{"reasoning": "r", "content": "cut", "finish_reason": "length"}]})
    choice = server.chat([USER])[2]["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["reasoning"] == "r" and "reasoning_content" not in choice["message"]
    response = server.responses([USER])[2]
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}


def test_usage_defaults_and_tool_call_defaults(serve):
    server = serve(one_turn(tool_calls=[{"name": "no_such_tool", "arguments": {"a": 1}}]))
    answer = server.chat([USER])[2]
    call = answer["choices"][0]["message"]["tool_calls"][0]
    assert call["id"] == "call_0_0" and call["function"]["name"] == "no_such_tool"
    assert json.loads(call["function"]["arguments"]) == {"a": 1}
    assert answer["choices"][0]["message"]["content"] is None
    assert answer["usage"]["prompt_tokens"] == 100 and answer["usage"]["total_tokens"] == 120
    output = server.responses([USER])[2]["output"]
    assert [item["type"] for item in output] == ["function_call"]


def test_malformed_tool_arguments_go_out_verbatim(serve):
    broken = '{"code": "__global__ void k() {", '
    server = serve(one_turn(tool_calls=[{"id": "c1", "name": "compile_kernel",
                                         "arguments": broken}]))
    message = server.chat([USER])[2]["choices"][0]["message"]
    assert message["tool_calls"][0]["function"]["arguments"] == broken
    assert server.responses([USER])[2]["output"][0]["arguments"] == broken


def test_two_megabytes_of_reasoning(serve):
    big = "thinking... " * (2 * 1024 * 1024 // 12 + 1)
    server = serve({"require_reasoning_passback": True,
                    "turns": [{"reasoning": big, "tool_calls": [{"id": "c", "name": "t"}]},
                              {"content": "done"}]})
    message = server.chat([USER])[2]["choices"][0]["message"]
    assert message["reasoning_content"] == big
    # The client sends it back: a > 2 MB request body.
    status, _, answer = server.chat([USER, message, *tool_results_chat(message)])
    assert status == 200 and answer["choices"][0]["message"]["content"] == "done"
    output = server.responses([USER], store=False,
                              include=["reasoning.encrypted_content"])[2]["output"]
    assert output[0]["summary"][0]["text"] == big


@pytest.mark.parametrize("items, index", [
    ("just a string", 0),
    ([], 0),
    ([USER], 0),
    # reasoning, message and calls of one turn, then the tools' outputs
    ([USER, {"type": "reasoning", "id": "rs_0"}, {"type": "message", "role": "assistant"},
      {"type": "function_call"}, {"type": "function_call"},
      {"type": "function_call_output"}, {"type": "function_call_output"}], 1),
    # a turn of calls only, then a turn with a message only (typeless assistant message)
    ([USER, {"type": "function_call"}, {"type": "function_call_output"},
      {"role": "assistant", "content": "done"}, {"role": "user", "content": "again"}], 2),
    # calls right after an assistant message are the same turn; reasoning after calls is not
    ([USER, {"type": "message", "role": "assistant"}, {"type": "function_call"},
      {"type": "reasoning"}, {"type": "function_call"}, {"type": "function_call_output"}], 2),
    # two assistant messages in a row are two turns; several reasoning items are one
    ([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"},
      {"type": "reasoning"}, {"type": "reasoning"}, {"role": "assistant", "content": "c"}], 3),
    # the README's example
    ([USER, {"type": "reasoning"}, {"type": "message", "role": "assistant"},
      {"type": "function_call"}, {"type": "function_call"}, {"type": "function_call_output"},
      {"type": "function_call_output"}, {"type": "reasoning"}, {"type": "function_call"},
      {"type": "function_call_output"}, {"type": "message", "role": "assistant"}, USER], 3),
])
def test_responses_turn_index_rule(items, index):
    assert model_server.responses_turn_index(items) == index


def test_chat_turn_index_counts_assistant_messages():
    messages = [{"role": "system"}, USER, {"role": "assistant"}, {"role": "tool"},
                {"role": "assistant"}, {"role": "user"}]
    assert model_server.chat_turn_index(messages) == 2


def test_responses_turn_index_over_http(serve):
    turns = [{"content": f"turn {k}"} for k in range(4)]
    server = serve({"turns": turns})
    items = [USER, {"type": "reasoning", "id": "x", "summary": []},
             {"type": "function_call", "call_id": "a", "name": "t", "arguments": "{}"},
             {"type": "function_call", "call_id": "b", "name": "t", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "a", "output": ""},
             {"type": "function_call_output", "call_id": "b", "output": ""},
             {"role": "assistant", "content": "typeless message"}, USER]
    assert server.responses(items)[2]["output"][0]["content"][0]["text"] == "turn 2"


# -------------------------------------------------------------------- failures, timing

@pytest.mark.parametrize("endpoint", ["chat", "responses"])
def test_429_with_retry_after_then_500_then_success(serve, endpoint):
    server = serve(one_turn(content="finally",
                            failures=[{"status": 429, "retry_after": 1}, {"status": 500}]))
    send = server.chat if endpoint == "chat" else server.responses

    status, headers, body = send([USER])
    assert status == 429 and headers["Retry-After"] == "1"
    assert body["error"]["code"] == "rate_limit_exceeded" and body["error"]["message"]
    status, headers, body = send([USER])
    assert status == 500 and headers["Retry-After"] is None
    assert body["error"]["type"] == "server_error"
    status, _, body = send([USER])
    assert status == 200


def test_failures_are_counted_per_endpoint_and_turn(serve):
    server = serve({"turns": [{"tool_calls": [{"name": "t"}], "failures": [{"status": 503}]},
                              {"content": "end", "failures": [{"status": 503}]}]})
    assert server.chat([USER])[0] == 503
    assert server.responses([USER])[0] == 503  # its own counter
    assert server.chat([USER])[0] == 200
    turn1 = [USER, {"role": "assistant", "content": "x"}]
    assert server.chat(turn1)[0] == 503
    assert server.chat(turn1)[0] == 200


def test_slow_first_then_a_prompt_retry(serve):
    server = serve(one_turn(content="patience", slow_first_s=3))
    body = json.dumps({"model": "scripted", "messages": [USER]}).encode()
    request = urllib.request.Request(server.url + "/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        _OPENER.open(request, timeout=0.5).read()
    start = time.monotonic()
    status, _, answer = server.chat([USER])
    assert status == 200 and answer["choices"][0]["message"]["content"] == "patience"
    assert time.monotonic() - start < 1.0


def test_concurrent_clients_are_served_at_once(serve):
    server = serve(one_turn(content="hi", delay_s=0.5))
    results = []

    def client(send):
        results.append(send([USER])[0])

    threads = [threading.Thread(target=client, args=(send,))
               for send in [server.chat, server.responses] * 4]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Eight requests of 0.5 s each: one after another would take 4 s.
    assert time.monotonic() - start < 2.0
    assert results == [200] * 8


def test_concurrent_clients_share_the_failure_counter(serve):
    server = serve(one_turn(content="hi", failures=[{"status": 500}] * 5))
    results = []
    threads = [threading.Thread(target=lambda: results.append(server.chat([USER])[0]))
               for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [200] * 7 + [500] * 5


# ------------------------------------------------------------------- refusals, checks

def test_unknown_model_is_404(serve):
    server = serve()
    for path in ("/v1/chat/completions", "/v1/responses"):
        status, _, body = server.call(path, {"model": "gpt-4o", "messages": [USER],
                                             "input": "hi"})
        assert status == 404
        assert body["error"]["message"] == "The model `gpt-4o` does not exist"
        assert body["error"]["code"] == "model_not_found"
        assert body["error"]["type"] == "invalid_request_error"


def test_api_key_is_checked(serve):
    server = serve(ECHO, "--api-key", "sk-test")
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        status, _, body = server.call("/v1/chat/completions",
                                      {"model": "scripted", "messages": [USER]}, headers)
        assert status == 401
        assert body["error"] == {"message": "Incorrect API key provided",
                                 "type": "invalid_request_error", "param": None,
                                 "code": "invalid_api_key"}
    assert server.call("/v1/models")[0] == 401
    good = {"Authorization": "Bearer sk-test"}
    assert server.call("/v1/chat/completions", {"model": "scripted", "messages": [USER]},
                       good)[0] == 200
    assert server.call("/v1/responses", {"model": "scripted", "input": "hi"}, good)[0] == 200


def test_no_tools_refuses_requests_with_tools(serve):
    server = serve(ECHO, "--no-tools")
    chat_tool = {"type": "function", "function": {"name": "echo", "parameters": {}}}
    status, _, body = server.chat([USER], tools=[chat_tool])
    assert status == 400
    assert body["error"]["message"] == "tools are not supported by this model"
    assert body["error"]["type"] == "invalid_request_error"
    status, _, _ = server.responses([USER], tools=[{"type": "function", "name": "echo"}])
    assert status == 400
    assert server.chat([USER])[0] == 200
    assert server.chat([USER], tools=[])[0] == 200


PASSBACK = {"require_reasoning_passback": True,
            "turns": [{"reasoning": "plan A", "tool_calls": [{"id": "c0", "name": "t"}]},
                      {"reasoning": "plan B", "tool_calls": [{"id": "c1", "name": "t"}]},
                      {"content": "done"}]}


def test_chat_reasoning_passback(serve):
    server = serve(PASSBACK)
    first = assistant_from_chat(server.chat([USER])[2])
    second_history = [USER, first, *tool_results_chat(first)]
    second = assistant_from_chat(server.chat(second_history)[2])
    history = [*second_history, second, *tool_results_chat(second)]
    assert server.chat(history)[2]["choices"][0]["message"]["content"] == "done"

    for broken in ({k: v for k, v in second.items() if k != "reasoning_content"},
                   {**second, "reasoning_content": "plan A"}):
        status, _, body = server.chat([*second_history, broken, *tool_results_chat(broken)])
        assert status == 400
        assert body["error"]["message"] == ("The reasoning_content in the thinking mode must "
                                            "be passed back to the API.")
        assert body["error"]["type"] == "invalid_request_error"


def test_responses_reasoning_passback(serve):
    server = serve(PASSBACK)
    stateless = {"store": False, "include": ["reasoning.encrypted_content"]}
    first = server.responses([USER], **stateless)[2]["output"]
    items = [USER, *first, *tool_results_responses(first)]
    second = server.responses(items, **stateless)[2]["output"]
    assert second[0]["id"] == "rs_1"
    items += [*second, *tool_results_responses(second)]
    status, _, final = server.responses(items, **stateless)
    assert status == 200 and final["output"][0]["content"][0]["text"] == "done"

    def refused(items, **extra):
        status, _, body = server.responses(items, **extra)
        return status == 400 and body["error"]["message"]

    assert "store" in refused(items, include=["reasoning.encrypted_content"])
    assert "store" in refused(items, store=True, include=["reasoning.encrypted_content"])
    assert "include" in refused(items, store=False)
    without_rs0 = [item for item in items if item.get("id") != "rs_0"]
    assert "rs_0" in refused(without_rs0, **stateless)
    tampered = [{**item, "encrypted_content": "enc-1-forged"} if item.get("id") == "rs_1"
                else item for item in items]
    assert "rs_1" in refused(tampered, **stateless)


# ---------------------------------------------------------------------- log, transport

def test_log_has_one_line_per_request(serve, tmp_path):
    log = tmp_path / "requests.jsonl"
    server = serve(ECHO, "--log", str(log), "--api-key", "k")
    auth = {"Authorization": "Bearer k"}
    server.call("/v1/models", headers=auth)
    server.call("/v1/chat/completions", {"model": "scripted", "messages": [USER]}, auth)
    server.call("/v1/responses", {"model": "scripted", "input": "hi"})
    server.call("/v1/responses", raw=b"not json", headers=auth)

    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["path"], r["answered"]) for r in records] == [
        ("/v1/models", 200), ("/v1/chat/completions", 200), ("/v1/responses", 401),
        ("/v1/responses", 400)]
    assert records[0]["body"] is None and records[3]["body"] is None
    assert records[1]["body"] == {"model": "scripted", "messages": [USER]}
    assert records[1]["headers"]["authorization"] == "Bearer k"
    assert records[1]["headers"]["content-type"] == "application/json"
    assert all(name == name.lower() for r in records for name in r["headers"])


def test_keep_alive_and_chunked_bodies(serve):
    server = serve()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    body = json.dumps({"model": "scripted", "messages": [USER]}).encode()
    connection.request("POST", "/v1/chat/completions", body=iter([body[:10], body[10:]]),
                       headers={"Content-Type": "application/json"}, encode_chunked=True)
    first = connection.getresponse()
    assert first.status == 200 and json.loads(first.read())["choices"]
    connection.request("POST", "/v1/chat/completions", body=body)  # same connection
    assert connection.getresponse().status == 200
    connection.close()


def test_expect_100_continue(serve):
    # curl sends this header before a large body and waits for "100 Continue".
    server = serve()
    body = json.dumps({"model": "scripted", "messages": [USER]}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body))
        assert sock.recv(1024).startswith(b"HTTP/1.1 100")
        sock.sendall(body)
        reply = b""
        while b"chat.completion" not in reply:
            chunk = sock.recv(65536)
            assert chunk
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200")
