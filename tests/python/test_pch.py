"""kbench's precompiled torch/extension.h for load_inline (python/kbench/pch.py, worker/pch_patch.py).

The build test compiles a real CPU extension through the patched load_inline (about a minute on
two cores: the header once, then main.cpp against it), checks from GCC's own `-H` trace that
the binding unit loaded the `.gch` (`! <entry>/torch/extension.h.gch`), and runs the module.
"""

import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kbench import pch

CANDIDATE = textwrap.dedent('''
    import torch
    from torch.utils.cpp_extension import load_inline

    _ext = load_inline(
        name="kbench_pch_probe",
        cpp_sources="torch::Tensor twice(torch::Tensor x) { return x * 2; }",
        functions=["twice"],
        extra_cflags=["-O2"],
    )
''')


def test_variants_from_literal_calls_only():
    source = textwrap.dedent('''
        from torch.utils.cpp_extension import load_inline
        import torch.utils.cpp_extension as ce
        a = load_inline("a", "x", extra_cflags=["-O3"])
        b = ce.load_inline(name="b", cpp_sources="x", cuda_sources="y")
        c = load_inline("c", "x", extra_cflags=FLAGS)
        d = load_inline("d", "x", extra_cflags=["-include", "/tmp/evil.h"])
        e = load_inline("e", "x", extra_include_paths=["/tmp"])
        f = load_inline("f", "x", **kw)
        g = load_inline("g", "x", None, None, None, ["-O3"])
    ''')
    assert pch.load_inline_variants(source) == [(False, ("-O3",)), (True, ())]


def test_flags_that_name_files_are_never_built_for():
    for flag in ["-include/tmp/x.h", "-fplugin=/tmp/p.so", "-specs=/tmp/s", "-B/tmp", "-O3;id", "-D$(id)"]:
        assert not pch.ALLOWED_EXTRA.fullmatch(flag), flag
    for flag in ["-O3", "-DNDEBUG", "-DX=1", "-std=c++20", "-march=native", "-ffast-math"]:
        assert pch.ALLOWED_EXTRA.fullmatch(flag), flag


def test_no_entry_leaves_flags_unchanged(tmp_path):
    from kbench.worker import pch_patch

    flags = ["-DTORCH_EXTENSION_NAME=x", "-isystem /inc", "-fPIC"]
    assert pch_patch.with_pch(flags, tmp_path) == flags
    assert pch_patch.state["entry"] is None


def test_binding_unit_builds_against_the_pch(tmp_path):
    pytest.importorskip("torch")
    candidate = tmp_path / "candidate.py"
    candidate.write_text(CANDIDATE)
    root = tmp_path / "pch"
    try:
        _build_and_check(tmp_path, candidate, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)  # the header is about 750 MB


def test_a_bad_entry_cap_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("KBENCH_PCH_MAX_ENTRIES", "lots")
    with pytest.raises(RuntimeError, match="KBENCH_PCH_MAX_ENTRIES='lots'"):
        pch.max_entries()


def _build_and_check(tmp_path, candidate, root):
    [entry] = pch.ensure(root, candidate)
    assert (Path(entry) / "torch" / "extension.h.gch").stat().st_size > 0
    assert pch.ensure(root, candidate) == [entry]  # the marker finds it: nothing rebuilt

    extensions = tmp_path / "extensions"
    script = textwrap.dedent(f'''
        import os, runpy, sys
        os.environ["TORCH_EXTENSIONS_DIR"] = {str(extensions)!r}
        from kbench.worker import pch_patch
        assert pch_patch.install({str(root)!r})
        module = runpy.run_path({str(candidate)!r})
        import torch
        assert module["_ext"].twice(torch.arange(3.0)).tolist() == [0.0, 2.0, 4.0]
        print("ENTRY", pch_patch.state["entry"])
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=_env(), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"ENTRY {entry}" in done.stdout

    build = extensions / "kbench_pch_probe"
    ninja = (build / "build.ninja").read_text()
    assert f"-isystem {shlex.quote(entry)} -Winvalid-pch" in ninja
    # GCC's include trace of ninja's own command for main.o: `!` marks a loaded .gch.
    command = subprocess.run(["ninja", "-C", str(build), "-t", "commands", "main.o"],
                             capture_output=True, text=True, check=True).stdout.strip()
    args = shlex.split(command)
    args[args.index("-o") + 1] = str(tmp_path / "again.o")
    traced = subprocess.run(args + ["-H"], cwd=build, capture_output=True, text=True)
    assert traced.returncode == 0, traced.stderr[-3000:]
    assert f"! {entry}/torch/extension.h.gch" in traced.stderr, traced.stderr[:2000]
    assert "not used because" not in traced.stderr


def _env():
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env
