"""The recorded agent runs in examples/agent/ (played by `make run` and the replay tests) hold the
kernels beside them: a recording written before a kernel was edited fails here, naming the
command that writes it again."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "agent"


def test_each_recording_is_what_make_recordings_writes_from_the_kernels():
    spec = importlib.util.spec_from_file_location("make_recordings", AGENT / "make_recordings.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    for backend, (language, hint) in generator.CASES.items():
        stored = json.loads((AGENT / f"masked_broadcast_{backend}.json").read_text())
        assert stored == generator.recording(backend, language, hint), \
            f"examples/agent/masked_broadcast_{backend}.json is stale: run python3 examples/agent/make_recordings.py"
        codes = [json.loads(t["tool_calls"][0]["arguments"])["kernel_code"] for t in stored["turns"]]
        assert codes[0] == (AGENT / "kernels" / f"{backend}_missing_declaration.py").read_text()
        assert set(codes[1:]) == {(AGENT / "kernels" / f"{backend}_fixed.py").read_text()}
