"""python/kbench/host_pch.py: nvcc's host compile against a precompiled header of the headers' part
of cudafe++'s output, asked for by the worker and built by kbench after checking the request.
The round trips run the toolkit's real nvcc and the system's GCC (no GPU needed; they skip where
there is no nvcc) on small units without torch; the checks of a request need neither."""

import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from kbench import host_pch, nvcc_steps

NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
needs_nvcc = pytest.mark.skipif(not os.access(NVCC, os.X_OK), reason="no CUDA toolkit (nvcc) here")
ARCH = "-gencode=arch=compute_90,code=sm_90"

HEADERS = "#include <cstdio>\n#include <vector>\n"
UNIT = HEADERS + textwrap.dedent("""\
    namespace { __device__ float twice(float v) { return 2.f * v; } }
    __global__ void scale(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] = twice(x[i]); }
    void launch(float* x, int n) { std::vector<int> v(3); scale<<<1, 256>>>(x, n + (int)v.size()); }
""")
OTHER = HEADERS + "__global__ void fill(float* x) { x[threadIdx.x] = 3.f; }\nvoid go(float* x) { fill<<<1, 32>>>(x); }\n"


def extension(tmp_path, name, text, units=1):
    """A folder as torch's build leaves it: the unit and a build.ninja with `units` CUDA units."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "cuda.cu").write_text(text)
    rules = "".join(f"build u{i}.cuda.o: cuda_compile {folder}/cuda.cu\n" for i in range(units))
    (folder / "build.ninja").write_text(rules)
    return folder


def build(folder, root, *extra):
    cwd = os.getcwd()
    os.chdir(folder)  # ninja runs nvcc in the extension's folder
    try:
        env_before = os.environ.get("KBENCH_HOST_PCH_DIR")
        os.environ["KBENCH_HOST_PCH_DIR"] = str(root)
        return nvcc_steps.compile_unit(NVCC, [ARCH, *extra, "-c", "cuda.cu", "-o", "cuda.cuda.o"])
    finally:
        os.chdir(cwd)
        if env_before is None:
            os.environ.pop("KBENCH_HOST_PCH_DIR", None)
        else:
            os.environ["KBENCH_HOST_PCH_DIR"] = env_before


def symbols(obj):
    out = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    out = re.sub(r"\d+_GLOBAL__N__(?:[0-9a-f]{8}_\d+_\w+?_cu_[0-9a-f]{8}|kbench_[0-9a-f]{16})", "MODULE", out)
    out = re.sub(r"_GLOBAL__N__(?:[0-9a-f]{8}_\d+_\w+?_cu_[0-9a-f]{8}|kbench_[0-9a-f]{16})", "MODULE", out)
    out = re.sub(r"tmpxft_\w+?_\d+_\d+_", "TMP_", out)
    return sorted(out.splitlines())


@needs_nvcc
def test_a_request_is_built_and_then_used_by_every_unit_with_those_headers(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    first = extension(tmp_path, "first", UNIT)
    code, output, summary = build(first, root, "-O3")
    assert code == 0, output
    assert "precompiled header" not in summary
    requests = list((first / host_pch.REQUESTS).iterdir())
    assert len(requests) == 1
    plain = symbols(first / "cuda.cuda.o")

    said = host_pch.build_requests(root, [first])
    assert len(said) == 1 and "built in" in said[0], said
    assert not (first / host_pch.REQUESTS).exists() or not list((first / host_pch.REQUESTS).iterdir())
    entry = root / requests[0].name
    assert (entry / "prefix.h.gch").is_file()
    assert oct((entry / "prefix.h.gch").stat().st_mode & 0o777) == "0o644"

    (first / "cuda.cuda.o").unlink()
    code, output, summary = build(first, root, "-O3")
    assert code == 0, output
    assert f"kbench's precompiled header {entry.name[:12]}" in summary
    assert symbols(first / "cuda.cuda.o") == plain

    # Another candidate with the same includes and flags: the same entry, its own code.
    other = extension(tmp_path, "other", OTHER)
    code, output, summary = build(other, root, "-O3")
    assert code == 0, output
    assert entry.name[:12] in summary
    assert any("fill" in line for line in symbols(other / "cuda.cuda.o"))


@needs_nvcc
def test_other_flags_are_another_entry_and_a_unit_beside_others_asks_for_none(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    first = extension(tmp_path, "first", UNIT)
    assert build(first, root, "-O3")[0] == 0
    host_pch.build_requests(root, [first])
    second = extension(tmp_path, "second", UNIT)
    code, _, summary = build(second, root, "-O2")
    assert code == 0 and "precompiled header" not in summary
    assert len(list((second / host_pch.REQUESTS).iterdir())) == 1
    several = extension(tmp_path, "several", UNIT, units=2)
    code, _, summary = build(several, root, "-O3")
    assert code == 0 and "precompiled header" not in summary
    assert not (several / host_pch.REQUESTS).exists()
    relocatable = extension(tmp_path, "rdc", UNIT)
    code, _, summary = build(relocatable, root, "-O3", "-rdc=true")
    assert "precompiled header" not in summary and not (relocatable / host_pch.REQUESTS).exists()


@needs_nvcc
def test_an_entry_whose_text_differs_is_not_used(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    first = extension(tmp_path, "first", UNIT)
    assert build(first, root)[0] == 0
    host_pch.build_requests(root, [first])
    entry = next(p for p in root.iterdir() if p.is_dir())
    (entry / "prefix.h").chmod(0o644)
    (entry / "prefix.h").write_text((entry / "prefix.h").read_text() + "\nint planted;\n")
    (first / "cuda.cuda.o").unlink()
    code, output, summary = build(first, root)
    assert code == 0, output
    assert "precompiled header" not in summary
    assert not any("planted" in line for line in symbols(first / "cuda.cuda.o"))


def request(tmp_path, text, flags=("-O3", "-x", "c++", "-c"), compiler=None):
    compiler = compiler or os.path.realpath(shutil.which("gcc") or "/usr/bin/gcc")
    key = host_pch.entry_key(compiler, list(flags), text)
    folder = tmp_path / "ext" / host_pch.REQUESTS / key
    folder.mkdir(parents=True)
    (folder / "prefix.h").write_text(text)
    (folder / "request.json").write_text(json.dumps({"compiler": compiler, "flags": list(flags), "key": key}))
    return folder


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
@pytest.mark.parametrize("text, flags, why", [
    ('# 1 "cuda.cu"\n#include "/etc/passwd"\n', None, "preprocessor line"),
    ('# 1 "cuda.cu"\n/* x */ #include "/etc/passwd"\n', None, "comment"),
    ('# 1 "cuda.cu"\n#\\\ninclude "/etc/passwd"\n', None, "line continuation"),
    ('# 1 "cuda.cu"\n%:include "/etc/passwd"\n', None, "digraph"),
    ('# 1 "cuda.cu"\n_Pragma("GCC pch_preprocess \\"x\\"")\n', None, "_Pragma"),
    ('# 1 "cuda.cu"\n#pragma GCC pch_preprocess "/tmp/x.gch"\n', None, "preprocessor line"),
    ('int x;\n', ("-O3", "-fplugin=/tmp/evil.so"), "not on kbench's list"),
    ('int x;\n', ("-O3", "-Wp,-include,/etc/passwd"), "not on kbench's list"),
    ('int x;\n', ("-O3", "-include", "/etc/passwd"), "not on kbench's list"),
    ('int x;\n', ("-O3", "-I/tmp"), "include folder /tmp"),
])
def test_kbench_builds_no_request_that_could_read_or_run_more_than_its_text(tmp_path, text, flags, why):
    folder = request(tmp_path, text, flags or ("-O3",))
    said = host_pch.build_entry(tmp_path, folder)
    assert why in said, said
    assert not any(p.name.endswith(".gch") for p in tmp_path.rglob("*"))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_a_request_whose_key_is_not_its_contents_or_whose_compiler_is_its_own_is_refused(tmp_path):
    folder = request(tmp_path, "int x;\n")
    (folder / "prefix.h").write_text("int y;\n")
    assert "its key is not its contents'" in host_pch.build_entry(tmp_path, folder)
    fake = tmp_path / "gcc"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    other = request(tmp_path / "b", "int x;\n", compiler=str(fake))
    assert "is not a system compiler" in host_pch.build_entry(tmp_path, other)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_an_honest_request_builds_and_the_oldest_entries_go_past_the_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("KBENCH_HOST_PCH_MAX_ENTRIES", "1")
    root = tmp_path / "root"
    first = request(tmp_path / "a", '# 1 "cuda.cu"\n#pragma GCC diagnostic push\nint x;\n#pragma GCC diagnostic pop\n')
    assert "built in" in host_pch.build_requests(root, [tmp_path / "a"])[0]
    second = request(tmp_path / "b", '# 1 "cuda.cu"\nint y;\n')
    assert "built in" in host_pch.build_requests(root, [tmp_path / "b"])[0]
    assert [p.name for p in root.iterdir() if p.is_dir()] == [second.name]
    assert not first.exists() and not second.exists()
