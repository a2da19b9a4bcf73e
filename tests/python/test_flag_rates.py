"""bench/flag_rates.py on synthetic suite results: honest results are the manifest's `expect: ok`
entries, each flag's rate is over the honest timed results of a device, and --expect-zero
fails the run when an honest result carries a flag that must not fire."""

import importlib.util
import json
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "flag_rates.py"
_spec = importlib.util.spec_from_file_location("flag_rates", _SCRIPT)
flag_rates = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(flag_rates)


def _result(root, candidate, status="ok", device="cuda:0", flags=()):
    return {
        "schema": "kbench.eval/1",
        "status": status,
        "problem": {"path": str(root / "problems" / "p.py")},
        "candidate": {"path": str(root / "examples" / candidate)},
        "config": {"device": device},
        "timing": {"measured": status == "ok", "flags": [{"id": f, "message": f"{f} said"} for f in flags]},
    }


def _suite(tmp_path, results):
    (tmp_path / "examples").mkdir()
    manifest = tmp_path / "examples" / "m.json"
    manifest.write_text(json.dumps({"entries": [
        {"problem": "../problems/p.py", "candidate": "cuda/a.py", "expect": "ok"},
        {"problem": "../problems/p.py", "candidate": "cuda/b.py", "expect": "ok"},
        {"problem": "../problems/p.py", "candidate": "cuda/c.py", "expect": "ok"},
        {"problem": "../problems/p.py", "candidate": "cpu/d.py", "expect": "ok"},
        {"problem": "../problems/p.py", "candidate": "exploits/side.py", "expect": "ok_flagged"},
    ]}))
    jsonl = tmp_path / "suite.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in results) + "\n")
    return manifest, jsonl


def test_rates_count_honest_results_per_device(tmp_path, capsys):
    manifest, jsonl = _suite(tmp_path, [
        _result(tmp_path, "cuda/a.py", flags=["launch_bound"]),
        _result(tmp_path, "cuda/b.py", flags=["launch_bound", "throttled", "throttled"]),
        _result(tmp_path, "cuda/c.py"),
        _result(tmp_path, "cpu/d.py", device="cpu"),
        _result(tmp_path, "exploits/side.py", flags=["off_stream_work"]),
    ])
    assert flag_rates.main([str(jsonl), "--manifest", str(manifest), "--expect-zero", "off_stream_work"]) == 0
    out = capsys.readouterr().out
    assert "honest timed results (expect ok, status ok): cpu 1, cuda 3" in out
    launch = next(line for line in out.splitlines() if line.startswith("launch_bound"))
    assert "2 / 3     66.7 %" in launch and "cuda/a.py (cuda)" in launch and "cuda/b.py (cuda)" in launch
    throttled = next(line for line in out.splitlines() if line.startswith("throttled"))
    assert "1 / 3     33.3 %" in throttled  # one result, though both sides were throttled
    off = next(line for line in out.splitlines() if line.startswith("off_stream_work"))
    assert "0 / 3      0.0 %" in off
    assert "exploits/side.py: expected ok_flagged, got ok; flags: off_stream_work" in out


def test_expect_zero_fails_on_an_honest_carrier(tmp_path, capsys):
    manifest, jsonl = _suite(tmp_path, [
        _result(tmp_path, "cuda/a.py", flags=["off_stream_work"]),
        _result(tmp_path, "cuda/b.py", status="incorrect", flags=["unstable_timing"]),
    ])
    assert flag_rates.main([str(jsonl), "--manifest", str(manifest), "--expect-zero",
                            "off_stream_work,unstable_timing", "--messages"]) == 1
    out = capsys.readouterr().out
    assert "expected on no honest result: off_stream_work on cuda/a.py" in out
    assert "cuda/a.py (cuda): off_stream_work said" in out
    # A result that failed is listed apart, not counted in the rates.
    assert "honest results that did not come back ok (not counted above):" in out
    assert "unstable_timing on" not in out
