"""A stand-in for kbench-worker in the paired-timing tests: answers the engine's time_block
requests (stdin, one JSON per line; answers on fd 3) with the times and NVML clocks that
FAKE_TIMING scripts, so that the engine's flags can be tested without a GPU.

It speaks the timed blocks' protocol as the worker does (python/kbench/worker/measurement.py):
without `seeds` in the request it asks for each call's seed with an interim message and gets
the returned call's sample seed; it writes timed_<block>.samples.safetensors to FAKE_OUTPUTS
with one float per call derived from that call's seed and sample seed, as a real model's
outputs would be a function of its inputs.

FAKE_TIMING: {"us": device µs per call, "step_block": first block that is "step" times slower
(-1: never), "step": factor, "step_period": when above 0, from step_block on the blocks are
slow and fast by turns, this many at a time (step_block + period onwards slow first), "sm_mhz",
"mem_mhz", "reasons": NVML clock reasons, "default_sm_mhz", "low_clock_blocks": how many first
blocks report "low_sm_mhz" instead, "wrong_call": [block, call] whose output is wrong,
"extra_message": true to send one interim message too many, "no_work": true to report calls
with no GPU work, "call_s": wall seconds each timed call takes, as the harness's own work per
call does}
"""

import json
import os
import struct
import sys
import time

script = json.loads(os.environ["FAKE_TIMING"])
outputs = os.environ.get("FAKE_OUTPUTS", "/tmp")
answers = os.fdopen(3, "w")


def send(message):
    answers.write(json.dumps(message) + "\n")
    answers.flush()


def ask(returned):
    send({"interim": True, "returned": returned})
    return json.loads(sys.stdin.readline())


def value(seed, sample_seed):
    return float((seed ^ sample_seed) % 1000) / 1000.0


def write_samples(path, rows):
    data = struct.pack(f"<{len(rows)}f", *rows)
    header = json.dumps({"output.0": {"dtype": "F32", "shape": [len(rows), 1],
                                      "data_offsets": [0, len(data)]}}).encode()
    header += b" " * ((8 - len(header) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + data)


for line in sys.stdin:
    request = json.loads(line)
    if request.get("op") == "exit":
        break
    answer = {"ok": True}
    if request.get("op") == "time_block":
        block, calls = request["block"], request["calls"]
        seeds, sample_seeds = request.get("seeds"), request.get("sample_seeds")
        rows = []
        if seeds is None:
            seed = ask(0)["seed"]
            for i in range(calls):
                reply = ask(i + 1)
                wrong = script.get("wrong_call") == [block, i]
                rows.append(value(seed, reply["sample_seed"]) + (1.0 if wrong else 0.0))
                seed = reply.get("seed")
            if script.get("extra_message"):
                ask(calls + 1)
        elif sample_seeds is not None:
            rows = [value(s, t) for s, t in zip(seeds, sample_seeds)]
        if seeds is None or sample_seeds is not None:
            write_samples(f"{outputs}/timed_{block}.samples.safetensors", rows)
            answer["signatures"] = {"float32[1]": list(range(calls))}
            answer["input_fingerprint"] = [1.0]
        first = script.get("step_block", -1)
        slow = 0 <= first <= block
        if slow and script.get("step_period", 0) > 0:
            slow = ((block - first) // script["step_period"]) % 2 == 1
        us = script["us"] * (script.get("step", 1.0) if slow else 1.0)
        time.sleep(script.get("call_s", 0) * calls)
        # A little spread, so that the noise is not zero.
        device = [us * (1 + 0.001 * (i % 3)) for i in range(calls)]
        work = 0 if script.get("no_work") else 1
        answer.update({
            "method": "cupti",
            "device_us": device,
            "host_us": [d + 5 for d in device],
            "calls": [{"kernel_count": work, "kernel_us": us} for _ in device],
            "sm_mhz": [script["low_sm_mhz"] if block < script.get("low_clock_blocks", 0)
                       else script["sm_mhz"]] * 2,
            "mem_mhz": [script["mem_mhz"]] * 2,
            "clock_reasons": script.get("reasons", []),
        })
        if block == 0:
            answer["setup"] = {"tracing": "cupti", "default_sm_mhz": script["default_sm_mhz"],
                               "l2_flush_bytes": 1 << 20, "input_bytes": script.get("input_bytes", 0)}
    send(answer)
