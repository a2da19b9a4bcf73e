#!/usr/bin/env python3
"""A scripted, OpenAI-compatible model server for the tests of `kbench agent`.

It plays a scenario file (see tests/fakes/scenarios/README.md): a list of turns, each one
assistant answer (reasoning, text, tool calls, usage), over both the Chat Completions API
(POST /v1/chat/completions) and the Responses API (POST /v1/responses). It can also fail on
purpose (429 with Retry-After, 500, 503), answer slowly, insist on the reasoning being passed
back, refuse tools, check an API key and log every request, so that the agent runner's
handling of each of these can be tested without a real model.

The server keeps no conversation state: which turn to play is read from the request itself,
so several agent runs can share one server and a resumed conversation continues where it was.

  Chat Completions: the turn index is the number of messages with role "assistant".

  Responses API: the turn index is the number of past assistant turns found in `input`
  (a string `input` means turn 0). A past turn is a contiguous run of assistant output items
  in the order  reasoning*, message?, function_call*  (an assistant "message" is an item of
  type "message", or with no type, whose role is "assistant"). Walking `input`:
    - any other item (user/system/developer message, function_call_output, ...) ends the
      current run;
    - an assistant item starts a new turn when no run is open, or when it comes before the
      previous item in that order (reasoning after a message or a call, a message after a
      call), or when it is a message right after a message;
    - otherwise it belongs to the open turn (reasoning after reasoning, a message after
      reasoning, calls after reasoning, a message or calls).
  So the function calls of one turn must be contiguous (all calls, then all their outputs),
  which is what the client sends.

The only mutable state is a per-(turn, endpoint) request counter, used by `failures` and
`slow_first_s`.

Usage:
  python3 tests/fakes/model_server.py --scenario FILE [--port 0] [--host 127.0.0.1]
      [--model NAME] [--api-key KEY] [--no-tools] [--log FILE]
It prints "model server listening on http://127.0.0.1:PORT" once bound, then serves until
SIGTERM or SIGINT (exit code 0).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import socket
import socketserver
import sys
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOOPBACK_HOSTS = {"127.0.0.1": "127.0.0.1", "localhost": "127.0.0.1", "::1": "::1"}

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
RESPONSES_PATHS = ("/v1/responses", "/responses")
MODELS_PATHS = ("/v1/models", "/models")

DEFAULT_USAGE = {"input": 100, "cached": 0, "output": 20, "reasoning": 0}

# Played when the conversation has gone past the last scripted turn.
SCENARIO_OVER = {"content": "(scenario over)", "finish_reason": "stop"}

_SCENARIO_KEYS = {"turns", "require_reasoning_passback", "reasoning_field", "comment"}
_TURN_KEYS = {"reasoning", "content", "tool_calls", "finish_reason", "usage", "delay_s",
              "failures", "slow_first_s", "comment"}
_TOOL_CALL_KEYS = {"id", "name", "arguments"}
_FAILURE_KEYS = {"status", "retry_after", "message"}
_FINISH_REASONS = {"stop", "tool_calls", "length", "content_filter"}
_REASONING_FIELDS = {"reasoning_content", "reasoning"}

_FAILURE_ERRORS = {
    429: ("Rate limit reached for requests (scripted failure).", "requests",
          "rate_limit_exceeded"),
    500: ("The server had an error while processing your request (scripted failure).",
          "server_error", None),
    503: ("The engine is currently overloaded, please try again later (scripted failure).",
          "server_error", None),
}


# ----------------------------------------------------------------------------- scenario

class ScenarioError(ValueError):
    """The scenario file is not valid; the message says where."""


def _check_keys(obj, allowed, where):
    if not isinstance(obj, dict):
        raise ScenarioError(f"{where}: expected an object")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        # A typo such as "tool_call" would otherwise silently play a different scenario.
        raise ScenarioError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")


def _check_number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ScenarioError(f"{where}: expected a number >= 0")


def _validate_tool_call(call, where):
    _check_keys(call, _TOOL_CALL_KEYS, where)
    if not isinstance(call.get("name"), str):
        raise ScenarioError(f"{where}.name: expected a string")
    if "id" in call and not isinstance(call["id"], str):
        raise ScenarioError(f"{where}.id: expected a string")
    if not isinstance(call.get("arguments", ""), (str, dict, list)):
        raise ScenarioError(f"{where}.arguments: expected a string (sent verbatim) or JSON")


def _validate_turn(turn, where):
    _check_keys(turn, _TURN_KEYS, where)
    for key in ("reasoning", "content"):
        if key in turn and not isinstance(turn[key], str):
            raise ScenarioError(f"{where}.{key}: expected a string")
    for k, call in enumerate(turn.get("tool_calls", [])):
        _validate_tool_call(call, f"{where}.tool_calls[{k}]")
    if "finish_reason" in turn and turn["finish_reason"] not in _FINISH_REASONS:
        raise ScenarioError(f"{where}.finish_reason: one of {sorted(_FINISH_REASONS)}")
    if "usage" in turn:
        _check_keys(turn["usage"], set(DEFAULT_USAGE), f"{where}.usage")
        for key, value in turn["usage"].items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ScenarioError(f"{where}.usage.{key}: expected an integer >= 0")
    for key in ("delay_s", "slow_first_s"):
        if key in turn:
            _check_number(turn[key], f"{where}.{key}")
    for k, failure in enumerate(turn.get("failures", [])):
        _check_keys(failure, _FAILURE_KEYS, f"{where}.failures[{k}]")
        status = failure.get("status")
        if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
            raise ScenarioError(f"{where}.failures[{k}].status: expected an HTTP error status")
        if "retry_after" in failure:
            _check_number(failure["retry_after"], f"{where}.failures[{k}].retry_after")


def validate_scenario(data):
    """Checks a parsed scenario and returns it with the top-level defaults filled in."""
    _check_keys(data, _SCENARIO_KEYS, "scenario")
    if not isinstance(data.get("turns"), list):
        raise ScenarioError("scenario.turns: expected a list")
    for index, turn in enumerate(data["turns"]):
        _validate_turn(turn, f"turns[{index}]")
    if not isinstance(data.get("require_reasoning_passback", False), bool):
        raise ScenarioError("scenario.require_reasoning_passback: expected true or false")
    field = data.get("reasoning_field", "reasoning_content")
    if field not in _REASONING_FIELDS:
        raise ScenarioError(f"scenario.reasoning_field: one of {sorted(_REASONING_FIELDS)}")
    return {"turns": data["turns"],
            "require_reasoning_passback": data.get("require_reasoning_passback", False),
            "reasoning_field": field}


def load_scenario(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ScenarioError(f"cannot read scenario {path}: {e}") from e
    return validate_scenario(data)


def turn_at(scenario, index):
    turns = scenario["turns"]
    return turns[index] if index < len(turns) else SCENARIO_OVER


# --------------------------------------------------------------------------- turn index

def chat_turn_index(messages):
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


_OUTPUT_ORDER = {"reasoning": 0, "message": 1, "function_call": 2}


def _assistant_kind(item):
    """The kind of assistant output an input item is, or None for anything else."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        return "message" if item.get("role") == "assistant" else None
    return kind if kind in ("reasoning", "function_call") else None


def responses_turn_index(items):
    """Counts the past assistant turns in a Responses `input` (rule in the module docstring)."""
    if isinstance(items, str):
        return 0
    turns = 0
    previous = None  # order of the previous item while it was assistant output, else None
    for item in items:
        kind = _assistant_kind(item)
        if kind is None:
            previous = None
            continue
        order = _OUTPUT_ORDER[kind]
        if previous is None or order < previous or (kind == "message" and order == previous):
            turns += 1
        previous = order
    return turns


# ------------------------------------------------------------------------------- errors

class ApiError(Exception):
    """An error answer: HTTP status plus an OpenAI-style error object."""

    def __init__(self, status, message, error_type="invalid_request_error", code=None,
                 param=None, headers=()):
        super().__init__(message)
        self.status = status
        self.body = {"error": {"message": message, "type": error_type, "param": param,
                               "code": code}}
        self.headers = list(headers)


def failure_error(failure):
    status = failure["status"]
    message, error_type, code = _FAILURE_ERRORS.get(
        status, (f"Scripted failure with status {status}.", "server_error", None))
    headers = []
    if "retry_after" in failure:
        headers.append(("Retry-After", str(failure["retry_after"])))
    return ApiError(status, failure.get("message", message), error_type, code, headers=headers)


# ---------------------------------------------------------------------- reasoning passback

def encrypted_content(index, reasoning):
    """The opaque reasoning blob for a turn: stable, so a passed-back copy can be checked."""
    digest = hashlib.sha256(reasoning.encode("utf-8")).hexdigest()[:12]
    return f"enc-{index}-{digest}"


def check_chat_passback(scenario, messages):
    """DeepSeek's thinking-mode rule: past tool-calling turns must carry their reasoning."""
    field = scenario["reasoning_field"]
    assistants = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
    for index, message in enumerate(assistants):
        if not message.get("tool_calls"):
            continue
        expected = turn_at(scenario, index).get("reasoning")
        if expected and message.get(field) != expected:
            raise ApiError(400, f"The {field} in the thinking mode must be passed back to the API.")


def check_responses_passback(scenario, body, index):
    """Stateless reasoning: store=false, encrypted content requested, and returned items resent."""
    if body.get("store") is not False:
        raise ApiError(400, 'This scenario requires "store": false (stateless reasoning).',
                       param="store")
    include = body.get("include") or []
    if "reasoning.encrypted_content" not in include:
        raise ApiError(400, 'This scenario requires "include" to contain '
                            '"reasoning.encrypted_content".', param="include")
    items = body["input"] if isinstance(body["input"], list) else []
    sent = {(item.get("id"), item.get("encrypted_content"))
            for item in items if isinstance(item, dict) and item.get("type") == "reasoning"}
    for past in range(min(index, len(scenario["turns"]))):
        reasoning = scenario["turns"][past].get("reasoning")
        if reasoning and (f"rs_{past}", encrypted_content(past, reasoning)) not in sent:
            raise ApiError(400, f"The reasoning item rs_{past} of turn {past} must be passed "
                                "back in input with its encrypted_content.", param="input")


# ----------------------------------------------------------------------------- answers

def _usage(turn):
    return {**DEFAULT_USAGE, **turn.get("usage", {})}


def _arguments(call):
    # Strings go out verbatim (they may be malformed on purpose); JSON is a convenience.
    args = call.get("arguments", "")
    return args if isinstance(args, str) else json.dumps(args)


def _tool_calls(turn, index):
    return [{"id": call.get("id", f"call_{index}_{k}"), "name": call["name"],
             "arguments": _arguments(call)}
            for k, call in enumerate(turn.get("tool_calls") or [])]


def _finish_reason(turn):
    return turn.get("finish_reason", "tool_calls" if turn.get("tool_calls") else "stop")


def chat_completion(turn, index, model, reasoning_field="reasoning_content"):
    message = {"role": "assistant", "content": turn.get("content"), "refusal": None}
    if turn.get("reasoning"):
        message[reasoning_field] = turn["reasoning"]
    calls = _tool_calls(turn, index)
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
    usage = _usage(turn)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": _finish_reason(turn)}],
        "usage": {"prompt_tokens": usage["input"], "completion_tokens": usage["output"],
                  "total_tokens": usage["input"] + usage["output"],
                  "prompt_tokens_details": {"cached_tokens": usage["cached"]},
                  "completion_tokens_details": {"reasoning_tokens": usage["reasoning"]}},
    }


def response_object(turn, index, model):
    output = []
    if turn.get("reasoning"):
        output.append({"type": "reasoning", "id": f"rs_{index}",
                       "summary": [{"type": "summary_text", "text": turn["reasoning"]}],
                       "encrypted_content": encrypted_content(index, turn["reasoning"])})
    if turn.get("content"):
        output.append({"type": "message", "id": f"msg_{index}", "role": "assistant",
                       "status": "completed",
                       "content": [{"type": "output_text", "text": turn["content"],
                                    "annotations": []}]})
    for k, call in enumerate(_tool_calls(turn, index)):
        output.append({"type": "function_call", "id": f"fc_{index}_{k}", "call_id": call["id"],
                       "name": call["name"], "arguments": call["arguments"],
                       "status": "completed"})
    truncated = _finish_reason(turn) == "length"
    usage = _usage(turn)
    return {
        "id": f"resp_{uuid.uuid4().hex}", "object": "response", "created_at": 0, "model": model,
        "status": "incomplete" if truncated else "completed", "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "output": output,
        "usage": {"input_tokens": usage["input"],
                  "input_tokens_details": {"cached_tokens": usage["cached"]},
                  "output_tokens": usage["output"],
                  "output_tokens_details": {"reasoning_tokens": usage["reasoning"]},
                  "total_tokens": usage["input"] + usage["output"]},
    }


# ------------------------------------------------------------------------------ server

class RequestCounter:
    """How many times each (turn, endpoint) was requested; shared by all handler threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts = {}

    def claim(self, key):
        """Counts one request and returns how many came before it."""
        with self._lock:
            seen = self._counts.get(key, 0)
            self._counts[key] = seen + 1
            return seen


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True  # a sleeping (slow_first_s) handler must not hold up shutdown

    def __init__(self, address, scenario, model="scripted", api_key=None, no_tools=False,
                 log_path=None):
        self.scenario = scenario
        self.model = model
        self.api_key = api_key
        self.no_tools = no_tools
        self.log_path = log_path
        self.counter = RequestCounter()
        self._log_lock = threading.Lock()
        super().__init__(address, Handler)

    def server_bind(self):
        # HTTPServer.server_bind does a reverse DNS lookup (getfqdn), slow without a resolver.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def log_request_record(self, record):
        if not self.log_path:
            return
        line = json.dumps(record) + "\n"
        with self._log_lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(line)

    # The checks shared by both POST endpoints, in the order OpenAI applies them.
    def check_request(self, body):
        model = body.get("model")
        if model is None:
            raise ApiError(400, "you must provide a model parameter", param="model")
        if model != self.model:
            raise ApiError(404, f"The model `{model}` does not exist", code="model_not_found",
                           param="model")
        if self.no_tools and body.get("tools"):
            raise ApiError(400, "tools are not supported by this model", param="tools")
        if body.get("stream"):
            raise ApiError(400, "streaming is not supported by this scripted server",
                           param="stream")

    def turn_of_chat(self, body):
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise ApiError(400, "messages: expected an array", param="messages")
        if self.scenario["require_reasoning_passback"]:
            check_chat_passback(self.scenario, messages)
        return chat_turn_index(messages)

    def turn_of_responses(self, body):
        if body.get("previous_response_id"):
            # Stateless by design: the turn must be derivable from `input` alone.
            raise ApiError(400, "previous_response_id is not supported by this scripted "
                                "server; send the whole conversation in input",
                           param="previous_response_id")
        items = body.get("input")
        if not isinstance(items, (str, list)):
            raise ApiError(400, "input: expected a string or an array", param="input")
        index = responses_turn_index(items)
        if self.scenario["require_reasoning_passback"]:
            check_responses_passback(self.scenario, body, index)
        return index

    def answer(self, endpoint, body):
        """The JSON answer to a valid POST, after the turn's delays; raises ApiError."""
        self.check_request(body)
        if endpoint == "chat":
            index = self.turn_of_chat(body)
        else:
            index = self.turn_of_responses(body)
        turn = turn_at(self.scenario, index)
        # Claimed on arrival, so a client's retry while the first request still sleeps
        # (slow_first_s) is answered at once.
        seen = self.counter.claim((index, endpoint))
        if seen == 0 and turn.get("slow_first_s"):
            time.sleep(turn["slow_first_s"])
        if turn.get("delay_s"):
            time.sleep(turn["delay_s"])
        failures = turn.get("failures") or []
        if seen < len(failures):
            raise failure_error(failures[seen])
        if endpoint == "chat":
            return chat_completion(turn, index, self.model, self.scenario["reasoning_field"])
        return response_object(turn, index, self.model)


class _BadBody(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1: keep-alive, and "Expect: 100-continue" (curl sends it with large bodies).
    protocol_version = "HTTP/1.1"
    server: ScriptedServer

    def log_message(self, format, *args):
        pass  # quiet: --log records requests when a test wants them

    def do_GET(self):
        self._body = None
        path = self.path.split("?", 1)[0]
        try:
            self._check_auth()
            if path not in MODELS_PATHS:
                raise ApiError(404, f"Unknown path {path}", code="unknown_url")
            self._send(200, {"object": "list",
                             "data": [{"id": self.server.model, "object": "model",
                                       "created": 0, "owned_by": "kbench"}]})
        except ApiError as e:
            self._send(e.status, e.body, e.headers)

    def do_POST(self):
        self._body = None
        path = self.path.split("?", 1)[0]
        try:
            # The body is read first, whatever the answer, to keep a kept-alive connection
            # in step.
            raw = self._read_body()
            endpoint = "chat" if path in CHAT_PATHS else (
                "responses" if path in RESPONSES_PATHS else None)
            if endpoint is None:
                raise ApiError(404, f"Unknown path {path}", code="unknown_url")
            # Parsed before the auth check only so that --log shows what a refused client sent.
            self._body, problem = self._parse(raw)
            self._check_auth()
            if problem:
                raise problem
            self._send(200, self.server.answer(endpoint, self._body))
        except ApiError as e:
            self._send(e.status, e.body, e.headers)
        except _BadBody as e:
            self.close_connection = True
            self._send(400, ApiError(400, str(e)).body)
        except Exception as e:  # a bug here: say so rather than drop the connection
            traceback.print_exc()
            self._send(500, ApiError(500, f"scripted server bug: {e!r}", "server_error").body)

    def _check_auth(self):
        key = self.server.api_key
        if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
            raise ApiError(401, "Incorrect API key provided", code="invalid_api_key")

    def _read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise _BadBody("invalid Content-Length") from None
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self):
        chunks = []
        while True:
            try:
                size = int(self.rfile.readline(65537).split(b";")[0].strip(), 16)
            except ValueError:
                raise _BadBody("invalid chunked body") from None
            if size == 0:
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    @staticmethod
    def _parse(raw):
        """(parsed body or None, the ApiError to answer if it is not a JSON object or None)."""
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            return None, ApiError(400, f"We could not parse the JSON body of your request: {e}")
        if not isinstance(body, dict):
            return body, ApiError(400, "The request body must be a JSON object")
        return body, None

    def _send(self, status, payload, headers=()):
        data = json.dumps(payload).encode("utf-8")
        # Logged before answering, so a client that has its answer also sees the log line.
        self.server.log_request_record({
            "path": self.path,
            "headers": {name.lower(): value for name, value in self.headers.items()},
            "body": self._body, "answered": status})
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (e.g. its timeout during slow_first_s); nothing to do.
            self.close_connection = True


# -------------------------------------------------------------------------------- main

def make_server(scenario, host="127.0.0.1", port=0, **options):
    """A bound ScriptedServer on a loopback address (not yet serving)."""
    if host not in LOOPBACK_HOSTS:
        raise ValueError(f"--host must be a loopback address, not {host!r}")
    address = LOOPBACK_HOSTS[host]
    server_class = ScriptedServer
    if address == "::1":
        server_class = type("ScriptedServer6", (ScriptedServer,),
                            {"address_family": socket.AF_INET6})
    return server_class((address, port), scenario, **options)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", required=True, help="scenario JSON file")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1", help="127.0.0.1, localhost or ::1")
    parser.add_argument("--model", default="scripted", help="the only model name accepted")
    parser.add_argument("--api-key", help="require Authorization: Bearer KEY")
    parser.add_argument("--no-tools", action="store_true",
                        help="refuse requests that carry tools (400)")
    parser.add_argument("--log", help="append one JSON line per request to this file")
    return parser.parse_args(argv)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    args = parse_args(argv)
    if args.host not in LOOPBACK_HOSTS:
        print(f"model_server: refusing --host {args.host}: loopback only "
              f"({', '.join(LOOPBACK_HOSTS)})", file=sys.stderr)
        return 2
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as e:
        print(f"model_server: {e}", file=sys.stderr)
        return 2
    # Installed before the listening line, so a signal sent as soon as it is read stops us
    # cleanly. SIGINT too: a shell starts background jobs with SIGINT ignored.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    signal.signal(signal.SIGINT, _raise_interrupt)
    server = make_server(scenario, args.host, args.port, model=args.model,
                         api_key=args.api_key, no_tools=args.no_tools, log_path=args.log)
    try:
        host, port = server.server_address[:2]
        shown = f"[{host}]" if ":" in host else host
        print(f"model server listening on http://{shown}:{port}", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
