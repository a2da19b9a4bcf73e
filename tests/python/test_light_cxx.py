"""python/kbench/light_cxx.py: load_inline's binding unit built against torch/types.h and
torch/python.h where that compiles, as written otherwise.

The wrapper runs with a fake compiler (a shell script) that records what it was given and fails
on a source that names `needs_all_header` without torch/extension.h, as g++ fails on a unit
that uses what only torch/all.h declares. One test builds a real load_inline extension through
torch with the wrapper installed, and calls it. The real build's figures are bench/cold_build's
(docs/architecture.md, "load_inline build time").
"""

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kbench import light_cxx

WRAPPER = Path(light_cxx.__file__)

# As torch writes a load_inline extension's main.cpp: the include, cpp_sources, the module.
MAIN = textwrap.dedent('''\
    #include <torch/extension.h>
    #include "local_helpers.h"
    torch::Tensor f(torch::Tensor x);
    PYBIND11_MODULE(ext, m) { m.def("f", torch::wrap_pybind_function(f), "f"); }
''')


def fake_cxx(tmp_path):
    log = tmp_path / "cxx.log"
    script = tmp_path / "c++"
    script.write_text(textwrap.dedent(f'''\
        #!/bin/sh
        src=""; out=""; dep=""; prev=""
        for a in "$@"; do
          [ "$prev" = "-c" ] && src="$a"
          [ "$prev" = "-o" ] && out="$a"
          [ "$prev" = "-MF" ] && dep="$a"
          prev="$a"
        done
        [ -n "$dep" ] && echo "$out: $src" > "$dep"
        echo "$*" >> {log}
        if [ -n "$src" ] && ! grep -q "torch/extension.h" "$src" && grep -q needs_all_header "$src"; then
          echo "$src:5:1: error: 'needs_all_header' was not declared in this scope" >&2
          exit 1
        fi
        [ -n "$out" ] && echo object > "$out"
        exit 0
    '''))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


def build(tmp_path, source_text, extra=(), env=None):
    cxx, log = fake_cxx(tmp_path)
    build_dir = tmp_path / "ext"
    build_dir.mkdir()
    source = build_dir / "main.cpp"
    source.write_text(source_text)
    target = build_dir / "main.o"
    args = ["-MMD", "-MF", f"{target}.d", "-fPIC", *extra, "-c", str(source), "-o", str(target)]
    env = {k: v for k, v in os.environ.items() if k != "KBENCH_PCH_DIR"} | (env or {})
    run = subprocess.run([sys.executable, "-I", "-S", str(WRAPPER), str(cxx), *args],
                         capture_output=True, text=True, env=env)
    calls = log.read_text().splitlines() if log.exists() else []
    note = Path(f"{target}.kbench-binding")
    return run, calls, note.read_text().strip() if note.exists() else None, build_dir


def test_a_binding_unit_that_compiles_against_the_smaller_headers_is_built_that_way(tmp_path):
    run, calls, note, build_dir = build(tmp_path, MAIN)
    assert run.returncode == 0, run.stderr
    assert len(calls) == 1
    copy = build_dir / "kbench-light" / "main.cpp"
    assert str(copy) in calls[0].split() and f"-iquote {build_dir}" in calls[0]
    text = copy.read_text()
    assert "#include <torch/types.h>\n#include <torch/python.h>\n" in text and "torch/extension.h" not in text
    assert '#include "local_helpers.h"' in text
    assert note == light_cxx.SWAPPED
    assert (build_dir / "main.o").read_text() == "object\n"


def test_a_unit_that_does_not_compile_that_way_is_built_as_written(tmp_path):
    run, calls, note, build_dir = build(tmp_path, MAIN + "int use = needs_all_header;\n")
    assert run.returncode == 0, run.stderr
    assert len(calls) == 2
    assert str(build_dir / "main.cpp") in calls[1].split()
    assert note.startswith("as written: with torch/types.h and torch/python.h it did not compile (")
    assert "needs_all_header" in note


def test_a_unit_naming_what_only_torch_all_declares_goes_straight_to_the_compiler(tmp_path):
    run, calls, note, _ = build(tmp_path, MAIN + "auto layer = torch::nn::Linear(1, 1);\n")
    assert run.returncode == 0
    assert len(calls) == 1 and "kbench-light" not in calls[0]
    assert note == "as written: it names what only torch/extension.h declares"


def test_without_kbenchs_precompiled_header_offered_the_note_says_so(tmp_path):
    run, _, _, build_dir = build(tmp_path, MAIN)
    assert run.returncode == 0
    assert (build_dir / "main.o.kbench-pch").read_text().startswith("not used: not offered")


def test_a_compiler_kbench_would_not_run_is_never_asked_a_header_for(tmp_path):
    """The fake compiler lives under a temporary folder: kbench's builder would refuse it, so the
    unit asks for nothing and builds against the smaller headers."""
    run, calls, note, build_dir = build(tmp_path, MAIN, env={"KBENCH_PCH_DIR": str(tmp_path / "pch")})
    assert run.returncode == 0, run.stderr
    assert len(calls) == 1 and note == light_cxx.SWAPPED
    assert "is not a system compiler" in (build_dir / "main.o.kbench-pch").read_text()
    assert not (build_dir / "kbench-pch").exists()


def test_the_link_and_other_commands_pass_through(tmp_path):
    cxx, log = fake_cxx(tmp_path)
    run = subprocess.run([sys.executable, "-I", "-S", str(WRAPPER), str(cxx), "main.o", "-shared", "-o",
                          str(tmp_path / "ext.so")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert log.read_text().split() == ["main.o", "-shared", "-o", str(tmp_path / "ext.so")]
    assert light_cxx.plan(["main.o", "-shared", "-o", "ext.so"]) is None
    assert light_cxx.plan(["-c", "cuda.cu", "-o", "cuda.o"]) is None


def test_every_include_of_the_big_headers_is_swapped_and_nothing_else():
    text = "#include <torch/extension.h>\n// torch/extension.h in a comment\n#include <torch/torch.h>\nint x;\n"
    assert light_cxx.light_text(text) == (
        "#include <torch/types.h>\n#include <torch/python.h>\n// torch/extension.h in a comment\n"
        "#include <torch/types.h>\n#include <torch/python.h>\nint x;\n")
    assert light_cxx.light_text("int x;\n") is None
    assert light_cxx.light_text("#include <torch/extension.h>\nTORCH_LIBRARY(ops, m) {}\n") is None


def test_ninja_finds_the_unit_up_to_date_on_the_next_load(tmp_path):
    """torch's compile rule with the wrapper as $cxx, run twice as the compile and the candidate
    worker run it: the second run has no work (the copy takes the source's time)."""
    beside = Path(sys.executable).parent / "ninja"
    ninja = str(beside) if beside.exists() else shutil.which("ninja")
    if ninja is None:
        pytest.skip("no ninja on this machine")
    cxx, _ = fake_cxx(tmp_path)
    build_dir = tmp_path / "ext"
    build_dir.mkdir()
    (build_dir / "main.cpp").write_text(MAIN)
    (build_dir / "build.ninja").write_text(textwrap.dedent(f"""\
        ninja_required_version = 1.3
        cxx = {sys.executable} -I -S {WRAPPER} {cxx}
        rule compile
          command = $cxx -MMD -MF $out.d -c $in -o $out
          depfile = $out.d
          deps = gcc
        build main.o: compile {build_dir / "main.cpp"}
        default main.o
    """))
    first = subprocess.run([ninja, "-C", str(build_dir)], capture_output=True, text=True)
    assert first.returncode == 0, first.stdout + first.stderr
    second = subprocess.run([ninja, "-C", str(build_dir), "-d", "explain"], capture_output=True, text=True)
    assert "no work to do" in second.stdout, second.stdout + second.stderr


def test_a_real_load_inline_extension_builds_through_it_and_runs(tmp_path):
    """torch's own load_inline with the wrapper installed: build.ninja names it as $cxx, the
    binding unit is built against the smaller headers, and the function it binds works."""
    if shutil.which("c++") is None:
        pytest.skip("no C++ compiler on this machine")
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(WRAPPER.parent.parent)!r})
        from kbench import light_cxx
        assert light_cxx.install()
        import torch
        from torch.utils.cpp_extension import load_inline
        ext = load_inline("kbench_light_cxx_test",
                          cpp_sources="torch::Tensor twice(torch::Tensor x) {{ return x * 2; }}",
                          functions=["twice"], build_directory={str(tmp_path)!r})
        x = torch.arange(5.0)
        assert torch.equal(ext.twice(x), x * 2)
        print("ran")
    ''')
    env = {k: v for k, v in os.environ.items() if k != "KBENCH_CXX_HEADER"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "ran" in done.stdout, done.stdout + done.stderr[-3000:]
    assert f"-S {WRAPPER} " in (tmp_path / "build.ninja").read_text()
    assert (tmp_path / "main.o.kbench-binding").read_text().strip() == light_cxx.SWAPPED


def test_switched_off_torch_keeps_its_own_compiler(monkeypatch):
    monkeypatch.setenv("KBENCH_CXX_HEADER", "off")
    assert light_cxx.install() is False
