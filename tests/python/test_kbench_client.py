"""python/kbench_client against a real `kbench serve` (started here on a free loopback port, on the
CPU device): evaluate, evaluate_many with a reward, and a refused request's error."""

import os
import subprocess
from pathlib import Path

import pytest
from conftest import start_kbench_serve

from kbench_client import Client, KbenchServiceError, evaluate, evaluate_many

ROOT = Path(__file__).resolve().parents[2]
KBENCH = os.environ.get("KBENCH_BINARY", "")
PROBLEM = ROOT / "examples/exploits/problem_relu.py"
HONEST = ROOT / "tests/e2e/candidates/relu_torch.py"
WRONG = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 0\n"
OPTIONS = {"device": "cpu", "rules": "structural", "timing": False, "trials": 2}

pytestmark = pytest.mark.skipif(not KBENCH or not Path(KBENCH).exists(),
                                reason="KBENCH_BINARY (the built kbench) is not set")


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    db = tmp_path_factory.mktemp("serve") / "results.sqlite"
    service, base, _ = start_kbench_serve(KBENCH, db, "--jobs", "1")
    yield base
    service.terminate()
    service.wait(timeout=120)


def test_evaluate_returns_the_result_and_the_reward(url):
    answer = evaluate(PROBLEM, HONEST, url=url, reward="correct", timeout_s=300, **OPTIONS)
    assert answer["state"] == "done"
    assert answer["result"]["status"] == "ok"
    assert answer["reward"]["value"] == 1.0


def test_evaluate_many_keeps_the_order_and_rewards_a_failure_with_the_failure_value(url):
    answers = evaluate_many([(PROBLEM, HONEST), (PROBLEM, WRONG)], url=url, reward="drkernel",
                            timeout_s=300, **OPTIONS)
    assert [a["result"]["status"] for a in answers] == ["ok", "incorrect"]
    assert answers[1]["reward"]["value"] == -0.3
    assert answers[0]["reward"]["why"].startswith("no speedup")  # timing off: nothing to pay


def test_a_refused_request_names_the_field(url):
    with pytest.raises(KbenchServiceError) as refused:
        Client(url).submit([{"problem": {"source": "x"}, "candidate": {"source": "y"},
                             "options": {"trials": "five"}}])
    assert refused.value.status == 400
    assert "options.trials" in refused.value.message
