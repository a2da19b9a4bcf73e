"""Writes the recorded agent runs `make run` plays (`kbench agent --model replay:FILE`), from the
kernel files beside this script: masked_broadcast_cpu.json and masked_broadcast_cuda.json.

Each is modelled on the seed's run (PopcornBench level 1, problem 30, masked broadcast from row
0): a first kernel that does not build (a missing declaration), the fix, a correctness run, a
static check and the submission. The kernels are kbench's own. Run it again after editing a
kernel; tests/python/test_agent_recordings.py fails while a recording and its kernels differ.

Usage: python3 examples/agent/make_recordings.py
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def recording(backend: str, language: str, error_hint: str) -> dict:
    broken = (HERE / "kernels" / f"{backend}_missing_declaration.py").read_text()
    fixed = (HERE / "kernels" / f"{backend}_fixed.py").read_text()

    def turn(reasoning, content, tool, code, usage):
        return {"reasoning": reasoning, "content": content,
                "tool_calls": [{"id": f"call_{tool}", "name": tool,
                                "arguments": json.dumps({"kernel_code": code})}],
                "usage": usage}

    return {
        "comment": f"A recorded agent run ({backend}), played by kbench agent --model replay:FILE: "
                   "a kernel that does not build, the fix, correctness, static check, submission. "
                   "Written by examples/agent/make_recordings.py.",
        "problem": "problems/popcorn/1_broadcast_masked_from_row0.py" if backend == "cuda"
                   else "examples/agent/problem_cpu.py",
        "variant": "popcorn",
        "turns": [
            turn("The reference is torch.where(mask, x[:1], x): every masked column takes row 0's "
                 f"value. One pass over the output in {language}, reading the mask per column, does "
                 "it without the broadcast temporary.",
                 f"A first {language} kernel: one pass, row 0 read for the masked columns.",
                 "compile_kernel", broken, {"input": 2100, "output": 900, "cached": 0, "reasoning": 300}),
            turn(f"The build failed: {error_hint}. A declaration before the first use fixes it.",
                 "The declaration was missing; here is the kernel with it.",
                 "compile_kernel", fixed, {"input": 3400, "output": 950, "cached": 2100, "reasoning": 120}),
            turn("It builds. Now the seeded trials, with the jittered row counts.",
                 "Checking correctness against the reference.",
                 "run_correctness", fixed, {"input": 4600, "output": 60, "cached": 3400, "reasoning": 40}),
            turn("Every trial passed. The static rules next: no fallback to torch.where in forward.",
                 "Running the static check.",
                 "static_check", fixed, {"input": 4900, "output": 60, "cached": 4600, "reasoning": 30}),
            turn("No verdict against it. Submitting this kernel.",
                 "Submitting the fixed kernel.",
                 "submit_kernel", fixed, {"input": 5200, "output": 60, "cached": 4900, "reasoning": 20}),
        ],
    }


# backend: (the language named in the reasoning, the compile error the second turn reads)
CASES = {
    "cpu": ("C++ (OpenMP)", "pick() was not declared in this scope"),
    "cuda": ("CUDA", "the binding in the C++ unit calls masked_broadcast_row0, which is not "
                     "declared there"),
}


def main() -> None:
    for backend, (language, hint) in CASES.items():
        path = HERE / f"masked_broadcast_{backend}.json"
        path.write_text(json.dumps(recording(backend, language, hint), indent=1) + "\n")
        print(f"wrote {path.relative_to(HERE.parents[1])}")


if __name__ == "__main__":
    main()
