"""A stand-in for kbench-worker in the paired-timing tests: answers the engine's time_block
requests (stdin, one JSON per line; answers on fd 3) with the times and NVML clocks that
FAKE_TIMING scripts, so that the engine's flags can be tested without a GPU.

FAKE_TIMING: {"us": device µs per call, "step_block": first block that is "step" times slower
(-1: never), "step": factor, "step_period": when above 0, from step_block on the blocks are
slow and fast by turns, this many at a time (step_block + period onwards slow first), "sm_mhz", "mem_mhz", "reasons": NVML clock reasons,
"default_sm_mhz", "low_clock_blocks": how many first blocks report "low_sm_mhz" instead}
"""

import json
import os
import sys

script = json.loads(os.environ["FAKE_TIMING"])
answers = os.fdopen(3, "w")
for line in sys.stdin:
    request = json.loads(line)
    if request.get("op") == "exit":
        break
    answer = {"ok": True}
    if request.get("op") == "time_block":
        block, calls = request["block"], request["calls"]
        first = script.get("step_block", -1)
        slow = 0 <= first <= block
        if slow and script.get("step_period", 0) > 0:
            slow = ((block - first) // script["step_period"]) % 2 == 1
        us = script["us"] * (script.get("step", 1.0) if slow else 1.0)
        # A little spread, so that the noise is not zero.
        device = [us * (1 + 0.001 * (i % 3)) for i in range(calls)]
        answer.update({
            "method": "cupti",
            "device_us": device,
            "host_us": [d + 5 for d in device],
            "pool_indices": [0] * calls,
            "sm_mhz": [script["low_sm_mhz"] if block < script.get("low_clock_blocks", 0)
                       else script["sm_mhz"]] * 2,
            "mem_mhz": [script["mem_mhz"]] * 2,
            "clock_reasons": script.get("reasons", []),
            "kept_outputs": [],
        })
        if block == 0:
            answer["setup"] = {"tracing": "cupti", "default_sm_mhz": script["default_sm_mhz"],
                               "l2_flush_bytes": 1 << 20}
    answers.write(json.dumps(answer) + "\n")
    answers.flush()
