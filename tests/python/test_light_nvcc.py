"""python/kbench/light_nvcc.py: load_inline's CUDA unit built against torch/types.h where that
compiles, as written otherwise.

A fake nvcc (a shell script) stands in for the real one: it records the source it was given and
fails on a source that names `needs_full_header` together with torch/types.h, as a real nvcc
fails on a unit that uses what only torch/extension.h declares. It prints no steps for
`--dryrun`, so nvcc_steps.py runs it as one command (tests/python/test_nvcc_steps.py runs the
real nvcc's steps). The real build's figures are bench/cold_build's (docs/architecture.md,
"load_inline build time").
"""

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

from kbench import light_nvcc

WRAPPER = Path(light_nvcc.__file__)

KERNEL = textwrap.dedent('''
    #include <torch/extension.h>
    #include "local_helpers.cuh"
    __global__ void k(float* y) { y[0] = 1.f; }
    torch::Tensor f(torch::Tensor x) { auto y = torch::empty_like(x); k<<<1, 1>>>(y.data_ptr<float>()); return y; }
''')


def fake_nvcc(tmp_path):
    log = tmp_path / "nvcc.log"
    script = tmp_path / "nvcc"
    script.write_text(textwrap.dedent(f'''\
        #!/bin/sh
        case " $* " in *" --dryrun "*) exit 0 ;; esac
        src=""; out=""; dep=""; prev=""
        for a in "$@"; do
          [ "$prev" = "-c" ] && src="$a"
          [ "$prev" = "-o" ] && out="$a"
          [ "$prev" = "-MF" ] && dep="$a"
          prev="$a"
        done
        [ -n "$dep" ] && echo "$out: $src" > "$dep"
        echo "$*" >> {log}
        if grep -q "torch/types.h" "$src" && grep -q needs_full_header "$src"; then
          echo "$src(3): error: identifier \\"needs_full_header\\" is undefined" >&2
          exit 2
        fi
        [ -n "$out" ] && echo object > "$out"
        exit 0
    '''))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


def build(tmp_path, source_text, env=None):
    nvcc, log = fake_nvcc(tmp_path)
    build_dir = tmp_path / "ext"
    build_dir.mkdir()
    source = build_dir / "cuda.cu"
    source.write_text(source_text)
    target = build_dir / "cuda.cuda.o"
    args = ["-MD", "-MF", f"{target}.d", "-O3", "-c", str(source), "-o", str(target)]
    run = subprocess.run([sys.executable, "-I", "-S", str(WRAPPER), str(nvcc), *args],
                         capture_output=True, text=True, env={**os.environ, **(env or {})})
    calls = log.read_text().splitlines() if log.exists() else []
    header = Path(f"{target}.kbench-header")
    return run, calls, header.read_text().strip() if header.exists() else None, build_dir


def test_a_unit_that_compiles_against_torch_types_is_built_that_way(tmp_path):
    run, calls, header, build_dir = build(tmp_path, KERNEL)
    assert run.returncode == 0, run.stderr
    assert len(calls) == 1
    copy = build_dir / "kbench-light" / "cuda.cu"
    assert str(copy) in calls[0] and f"-I {build_dir}" in calls[0]
    assert "#include <torch/types.h>" in copy.read_text()
    assert '#include "local_helpers.cuh"' in copy.read_text()
    # KERNEL's quoted include keeps it whole (tests/python/test_cuda_split.py has the split).
    assert header == light_nvcc.SWAPPED + "; not split: a quoted include"
    assert (build_dir / "cuda.cuda.o").read_text() == "object\n"


def test_a_unit_that_does_not_compile_that_way_is_built_as_written(tmp_path):
    run, calls, header, build_dir = build(tmp_path, KERNEL + "int needs_full_header_use = needs_full_header;\n")
    assert run.returncode == 0, run.stderr
    assert len(calls) == 2
    assert str(build_dir / "cuda.cu") in calls[1].split()
    assert header.startswith("as written: with torch/types.h it did not compile (")
    assert "needs_full_header" in header


def test_a_unit_naming_pybind11_goes_straight_to_nvcc(tmp_path):
    run, calls, header, build_dir = build(tmp_path, KERNEL + "PYBIND11_MODULE(m, x) {}\n")
    assert run.returncode == 0
    assert len(calls) == 1 and "kbench-light" not in calls[0]
    assert header == "as written: it names what only torch/extension.h declares; not split: a quoted include"


def test_switched_off_or_not_a_compile_is_passed_through_unchanged(tmp_path):
    run, calls, header, _ = build(tmp_path, KERNEL, env={"KBENCH_CUDA_HEADER": "off"})
    assert run.returncode == 0 and len(calls) == 1 and "kbench-light" not in calls[0]
    assert header == "as written: KBENCH_CUDA_HEADER=off"
    assert light_nvcc.plan(["a.o", "b.o", "-o", "dlink.o", "-dlink"]) is None
    assert light_nvcc.plan(["-c", "x.cpp", "-o", "x.o"]) is None


def test_ninja_finds_the_unit_up_to_date_on_the_next_load(tmp_path):
    """torch's build.ninja with the wrapper as $nvcc, run twice as the compile and the candidate
    worker run it: the second run has no work. ninja records an output as of its command's
    start, so a copy written during the command would make the unit dirty for ever (on the
    H200 every candidate worker built the unit again, 33 s)."""
    # The environment's own ninja (PyPI's, 1.13 in scripts/setup.sh's venv and on the GPU
    # machine), which records an output as of its command's start; 1.11 records the output's
    # own time and would not see the fault.
    beside = Path(sys.executable).parent / "ninja"
    ninja = str(beside) if beside.exists() else shutil.which("ninja")
    nvcc, _ = fake_nvcc(tmp_path)
    build_dir = tmp_path / "ext"
    build_dir.mkdir()
    (build_dir / "cuda.cu").write_text(KERNEL)
    (build_dir / "build.ninja").write_text(textwrap.dedent(f"""\
        ninja_required_version = 1.3
        nvcc = {sys.executable} -I -S {WRAPPER} {nvcc}
        rule cuda_compile
          depfile = $out.d
          deps = gcc
          command = $nvcc -MD -MF $out.d -c $in -o $out
        build cuda.cuda.o: cuda_compile {build_dir / "cuda.cu"}
        default cuda.cuda.o
    """))
    first = subprocess.run([ninja, "-C", str(build_dir)], capture_output=True, text=True)
    assert first.returncode == 0, first.stdout + first.stderr
    second = subprocess.run([ninja, "-C", str(build_dir), "-d", "explain"], capture_output=True, text=True)
    assert "no work to do" in second.stdout, second.stdout + second.stderr


def test_the_swap_touches_only_the_include_line():
    text = "#include <torch/torch.h>\n// torch/extension.h in a comment\n__global__ void k() {}\n"
    assert light_nvcc.light_text(text) == "#include <torch/types.h>\n// torch/extension.h in a comment\n__global__ void k() {}\n"
    assert light_nvcc.light_text("__global__ void k() {}\n") is None
    assert light_nvcc.light_text("#include <torch/extension.h>\nauto g = torch::nn::Linear(1, 1);\n") is None
