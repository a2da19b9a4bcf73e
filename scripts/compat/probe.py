"""Loads each problem the way kbench-worker does (kbench.worker.loading.load_problem: the file
unmodified, `popcorn_pri` injected, kbench's `kernelbench` shim importable) and sizes trial 0's
inputs and weights on torch's meta device, so that even multi-GB problems are sized in
milliseconds. Each problem runs in a forked child with a deadline: a problem that hangs or
crashes on load costs one child, not the run."""

import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

import static_scan


def _bytes(values) -> tuple[int, list]:
    import torch

    total, shapes = 0, []
    for v in values:
        if isinstance(v, torch.Tensor):
            total += v.numel() * v.element_size()
            shapes.append([list(v.shape), str(v.dtype).replace("torch.", "")])
        else:
            shapes.append(type(v).__name__)
    return total, shapes


def _size_inputs(module, variant: str, seed: int, device: str) -> dict:
    import torch
    from kernelbench import popcorn_random_inputs as pri

    pri._begin_trial(seed, variant)
    torch.manual_seed(seed)
    with torch.device(device):
        init = module.get_init_inputs()
        model = module.Model(*init)
        torch.manual_seed(seed)
        inputs = module.get_inputs()
    in_bytes, shapes = _bytes(inputs)
    weights = sum(p.numel() * p.element_size() for p in model.parameters()) if hasattr(model, "parameters") else 0
    return {"input_bytes": in_bytes, "weight_bytes": weights, "input_shapes": shapes, "sized_on": device}


def _one(path: str, variant: str, seed: int) -> dict:
    from kbench.worker.errors import PhaseError
    from kbench.worker.loading import load_problem

    record = {"static": static_scan.scan(Path(path))}
    started = time.monotonic()
    try:
        module = load_problem(path)
    except PhaseError as exc:
        record.update(loads=False, load_error=str(exc))
        return record
    record.update(loads=True, load_s=round(time.monotonic() - started, 3))
    errors = []
    for device in ("meta", "cpu"):  # helpers that call .item() on a drawn tensor need real ones
        try:
            record.update(_size_inputs(module, variant, seed, device))
            break
        except Exception as exc:  # noqa: BLE001 - a problem's own failure, reported
            errors.append(f"{device}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300])
    record["sizing_errors"] = errors
    return record


def probe(path: str, variant: str, seed: int, deadline_s: float) -> dict:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            result = _one(path, variant, seed)
        except BaseException as exc:  # noqa: BLE001
            result = {"loads": False, "load_error": f"probe failed: {type(exc).__name__}: {exc}",
                      "log": traceback.format_exc()[-2000:]}
        with os.fdopen(write_fd, "w") as out:
            out.write(json.dumps(result, default=str))
        os._exit(0)
    os.close(write_fd)
    os.set_blocking(read_fd, False)
    started, chunks, status = time.monotonic(), [], 0
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            try:
                while data := os.read(read_fd, 1 << 16):
                    chunks.append(data)
            except BlockingIOError:
                pass
            if done:
                break
            if time.monotonic() - started > deadline_s:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"loads": None, "load_error": f"loading and sizing took over {deadline_s:.0f} s"}
            time.sleep(0.02)
    finally:
        os.close(read_fd)
    text = b"".join(chunks).decode()
    if not text:
        return {"loads": None, "load_error": f"the probe child died (wait status {status})"}
    return json.loads(text)


def probe_all(problems, out_path: Path, deadline_s: float = 120.0, log=sys.stderr) -> dict:
    """Probes every problem not already in out_path (JSON lines, appended: resumable)."""
    os.environ.setdefault("KBENCH_DEVICE", "cpu")
    # A probe loads, it never downloads: level-4 problems' from_pretrained would otherwise retry
    # the Hugging Face hub for about 23 s each on a machine without network (seen on the H200);
    # offline, the missing weights are reported as what the problem needs.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch  # noqa: F401 - imported once, before the forks

    done = {}
    if out_path.exists():
        for line in out_path.read_text().splitlines():
            try:
                row = json.loads(line)
                done[row["key"]] = row
            except (ValueError, KeyError):
                continue  # a cut-short last line from a killed run
    with out_path.open("a") as out:
        for problem in problems:
            if problem.key in done:
                continue
            row = probe(str(problem.path), problem.variant, 42, deadline_s)
            row["key"] = problem.key
            done[problem.key] = row
            out.write(json.dumps(row, default=str) + "\n")
            out.flush()
            print(f"probe {problem.label}: loads={row.get('loads')} "
                  f"bytes={row.get('input_bytes')}", file=log)
    return done
