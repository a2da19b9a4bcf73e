"""The evaluation service's /v1 API from Python: submit, poll, wait, cancel (docs/service.md)."""

import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

DEFAULT_URL = os.environ.get("KBENCH_SERVICE_URL", "http://127.0.0.1:8080")
TERMINAL = ("done", "failed", "cancelled")


class KbenchServiceError(RuntimeError):
    """A refused request (the service's message names the field) or an unreachable service."""

    def __init__(self, status, message):
        super().__init__(f"kbench serve answered {status}: {message}" if status else message)
        self.status = status
        self.message = message


def file_spec(value, send_paths=False):
    """What the API takes for a problem or candidate: a dict passes through; a path to a file is
    sent as its text (or as the path, with send_paths, for a service started with --allow-path
    that holds the same files); any other string is the source itself."""
    if isinstance(value, dict):
        return value
    path = Path(value) if isinstance(value, (str, os.PathLike)) else None
    if path is not None and "\n" not in str(value) and path.is_file():
        if send_paths:
            return {"path": str(path.resolve())}
        return {"source": path.read_text(encoding="utf-8"), "filename": path.name}
    if isinstance(value, str):
        return {"source": value}
    raise TypeError(f"expected a path, a source text or a dict, got {type(value).__name__}")


class Client:
    def __init__(self, url=DEFAULT_URL, token=None, timeout_s=60.0):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("KBENCH_SERVICE_TOKEN")
        self.timeout_s = timeout_s

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                return json.loads(answer.read().decode())
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            try:
                message = json.loads(text).get("error", text)
            except ValueError:
                message = text
            raise KbenchServiceError(error.code, message) from None
        except urllib.error.URLError as error:
            raise KbenchServiceError(0, f"cannot reach kbench serve at {self.url}: {error.reason}") from None

    def submit(self, evaluations):
        """Queues evaluations (each {"problem", "candidate", "options"}); returns their ids."""
        body = evaluations[0] if len(evaluations) == 1 else {"evaluations": list(evaluations)}
        return self._call("POST", "/v1/evaluations", body)["ids"]

    def get(self, evaluation_id):
        return self._call("GET", f"/v1/evaluations/{evaluation_id}")

    def cancel(self, evaluation_id):
        return self._call("DELETE", f"/v1/evaluations/{evaluation_id}")

    def queue(self):
        return self._call("GET", "/v1/queue")

    def health(self):
        return self._call("GET", "/v1/health")

    def wait(self, ids, poll_s=0.5, timeout_s=None):
        """The answers for `ids`, in order, once each is done, failed or cancelled."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        answers = {}
        while len(answers) < len(ids):
            for evaluation_id in ids:
                if evaluation_id not in answers:
                    answer = self.get(evaluation_id)
                    if answer["state"] in TERMINAL:
                        answers[evaluation_id] = answer
            if len(answers) < len(ids):
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"{len(ids) - len(answers)} of {len(ids)} evaluations "
                                       f"not finished after {timeout_s} s")
                time.sleep(poll_s)
        return [answers[evaluation_id] for evaluation_id in ids]


def _request(problem, candidate, reward, send_paths, options):
    options = dict(options)
    if reward is not None:
        options["reward"] = reward
    return {"problem": file_spec(problem, send_paths), "candidate": file_spec(candidate, send_paths),
            "options": options}


def evaluate(problem, candidate, *, url=DEFAULT_URL, token=None, reward=None, send_paths=False,
             timeout_s=None, **options):
    """Evaluates one candidate and returns the service's answer once it is done: state, cached,
    result (the kbench.eval/1 document) and, with `reward` (a preset's name or a formula),
    reward {value, preset, speedup_ci95}. `options`: device, variant, precision, trials, rules,
    timing, priority."""
    client = Client(url, token)
    ids = client.submit([_request(problem, candidate, reward, send_paths, options)])
    return client.wait(ids, timeout_s=timeout_s)[0]


def evaluate_many(pairs, *, url=DEFAULT_URL, token=None, reward=None, send_paths=False,
                  timeout_s=None, **options):
    """Evaluates (problem, candidate) pairs as one batch and returns their answers in order."""
    client = Client(url, token)
    ids = client.submit([_request(p, c, reward, send_paths, options) for p, c in pairs])
    return client.wait(ids, timeout_s=timeout_s)
