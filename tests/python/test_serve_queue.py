"""`kbench serve --queue`: the evaluation service hands its evaluations to the `kbench worker`s of a
Redis work queue (docs/distributed.md). A real redis-server and a CPU worker are started here; the
client's evaluation comes back from the worker, with its reward, and a repeat from the store.
Skips, saying why, without redis-server or a kbench built with hiredis and cpp-httplib."""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import start_kbench_serve

from kbench_client import evaluate

ROOT = Path(__file__).resolve().parents[2]
KBENCH = os.environ.get("KBENCH_BINARY", "")

pytestmark = [
    pytest.mark.skipif(not KBENCH or not Path(KBENCH).exists(), reason="KBENCH_BINARY (the built kbench) is not set"),
    pytest.mark.skipif(shutil.which("redis-server") is None,
                       reason="redis-server is not installed (scripts/setup.sh installs it)"),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_hands_evaluations_to_the_queue_workers(tmp_path):
    port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", str(tmp_path), "--logfile", str(tmp_path / "redis.log")])
    url = f"redis://127.0.0.1:{port}/served"
    processes = [redis]
    try:
        worker = subprocess.Popen([KBENCH, "worker", "--queue", url, "--device", "cpu", "--name", "served-worker",
                                   "--no-db"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        processes.append(worker)
        line = worker.stdout.readline()
        if not line:
            err = worker.stderr.read()
            if "without hiredis" in err:
                pytest.skip("this kbench was built without hiredis: no work queue")
            raise AssertionError(err)
        service, base, line = start_kbench_serve(KBENCH, tmp_path / "served.sqlite", "--queue", url)
        processes.append(service)
        assert "evaluating through the workers of " + url in line, line
        options = {"device": "cpu", "rules": "structural", "timing": False, "trials": 2}
        problem, candidate = ROOT / "examples/exploits/problem_relu.py", ROOT / "tests/e2e/candidates/relu_torch.py"
        first = evaluate(str(problem), str(candidate), url=base, reward="correct", timeout_s=300, **options)
        assert first["state"] == "done", first
        assert first["result"]["status"] == "ok"
        assert first["reward"]["value"] == 1.0
        again = evaluate(str(problem), str(candidate), url=base, reward="correct", timeout_s=60, **options)
        assert again["cached"] is True and again["result"]["status"] == "ok"
        status = subprocess.run([KBENCH, "queue", "status", url], capture_output=True, text=True, timeout=60)
        # The worker, not the service, evaluated it: one result on the queue, one consumer.
        assert "results   1 " in status.stdout and "served-worker" in status.stdout, status.stdout
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
