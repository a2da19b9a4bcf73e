"""python/kbench/nvcc_steps.py: an `nvcc -c` run as nvcc's own steps, the host front end beside
the device chain. These tests run the toolkit's real nvcc (it compiles without a GPU; they skip
where there is none) on a small unit without torch, and compare with nvcc run as one command."""

import os
import re
import shutil
import stat
import subprocess
import textwrap
from pathlib import Path

import pytest

from kbench import nvcc_steps

NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
needs_nvcc = pytest.mark.skipif(not os.access(NVCC, os.X_OK), reason="no CUDA toolkit (nvcc) here")
ARCH = "-gencode=arch=compute_90,code=sm_90"

UNIT = textwrap.dedent("""\
    #include <cstdio>
    namespace { __device__ float twice(float v) { return 2.f * v; } }
    __global__ void scale(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = twice(x[i]); }
    void launch(float* x, int n) { scale<<<(n + 255) / 256, 256>>>(x, n); }
""")


def symbols(obj):
    """The object's symbols, with the names that hold the module id or nvcc's temporary file
    names (which differ from one compile to the next) made alike."""
    out = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    out = re.sub(r"_[0-9a-f]{8}_\d+_\w+?_cu_[0-9a-f]{8}", "MODULE", out)
    out = re.sub(r"tmpxft_\w+?_\d+_\d+_", "TMP_", out)
    return sorted(out.splitlines())


def dependencies(depfile):
    text = Path(depfile).read_text().replace("\\\n", " ")
    return {os.path.realpath(p) for p in text.partition(":")[2].split()}


@needs_nvcc
def test_the_steps_build_the_object_nvcc_builds(tmp_path):
    (tmp_path / "unit.cu").write_text(UNIT)
    one = subprocess.run([NVCC, ARCH, "-O3", "-MD", "-MF", "one.o.d", "-c", "unit.cu", "-o", "one.o"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert one.returncode == 0, one.stderr
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, output, summary = nvcc_steps.compile_unit(
            NVCC, [ARCH, "-O3", "-MD", "-MF", "steps.o.d", "-c", "unit.cu", "-o", "steps.o"])
    finally:
        os.chdir(cwd)
    assert code == 0, output
    assert summary.startswith("nvcc's front ends side by side (host ")
    assert symbols(tmp_path / "one.o") == symbols(tmp_path / "steps.o")
    assert dependencies(tmp_path / "steps.o.d") >= dependencies(tmp_path / "one.o.d")
    assert Path(tmp_path / "steps.o.d").read_text().startswith("steps.o : ")


@needs_nvcc
def test_a_source_error_is_reported_once_with_nvcc_s_words(tmp_path):
    (tmp_path / "bad.cu").write_text(UNIT + "int broken = undeclared_name;\n")
    one = subprocess.run([NVCC, ARCH, "-c", str(tmp_path / "bad.cu"), "-o", str(tmp_path / "one.o")],
                         capture_output=True, text=True)
    code, output, summary = nvcc_steps.compile_unit(
        NVCC, [ARCH, "-c", str(tmp_path / "bad.cu"), "-o", str(tmp_path / "steps.o")])
    assert code != 0 and one.returncode != 0 and summary == ""
    said = [line for line in output.splitlines() if "error" in line]
    assert said and all("undeclared_name" in line for line in said if "identifier" in line)
    assert output.count('identifier "undeclared_name" is undefined') == 1
    assert 'identifier "undeclared_name" is undefined' in one.stdout + one.stderr
    assert not (tmp_path / "steps.o").exists()


@needs_nvcc
def test_an_error_only_the_device_side_sees_fails_the_build(tmp_path):
    # A host function called from a kernel: cudafe++ accepts it, cicc does not.
    (tmp_path / "device.cu").write_text("float host_only(float v) { return v; }\n"
                                        "__global__ void k(float* x) { x[0] = host_only(x[0]); }\n")
    code, output, _ = nvcc_steps.compile_unit(
        NVCC, [ARCH, "-c", str(tmp_path / "device.cu"), "-o", str(tmp_path / "device.o")])
    assert code != 0
    assert "host_only" in output


@needs_nvcc
def test_no_temporary_folder_is_left_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    (tmp_path / "unit.cu").write_text(UNIT)
    code, output, _ = nvcc_steps.compile_unit(NVCC, [ARCH, "-c", str(tmp_path / "unit.cu"), "-o", str(tmp_path / "u.o")])
    assert code == 0, output
    assert list((tmp_path / "tmp").iterdir()) == []


def test_what_the_steps_do_not_know_runs_as_one_nvcc(tmp_path):
    log = tmp_path / "log"
    fake = tmp_path / "nvcc"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\necho "#$ mystery-tool --do-it" >&2\n'
                    'case " $* " in *" --dryrun "*) exit 0 ;; esac\necho built\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    code, output, summary = nvcc_steps.compile_unit(str(fake), ["-c", "x.cu", "-o", "x.o"])
    assert (code, summary) == (0, "") and "built" in output
    assert log.read_text().splitlines() == ["--dryrun -c x.cu -o x.o", "-c x.cu -o x.o"]
    for args in (["--keep", "-c", "x.cu", "-o", "x.o"], ["-MF", "x.d", "-c", "x.cu", "-o", "x.o"],
                 ["-c", "x.cpp", "-o", "x.o"]):
        assert nvcc_steps.plan(str(fake), args, tmp_path) is None


def test_switched_off_nvcc_runs_as_one_command(tmp_path, monkeypatch):
    log = tmp_path / "log"
    fake = tmp_path / "nvcc"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("KBENCH_NVCC_STEPS", "off")
    assert nvcc_steps.compile_unit(str(fake), ["-c", "x.cu", "-o", "x.o"])[0] == 0
    assert log.read_text().splitlines() == ["-c x.cu -o x.o"]


def test_dependency_rules_are_read_as_make_writes_them():
    text = "x.o: a.cu /usr/include/with\\ space.h \\\n /usr/include/b.h\n"
    assert nvcc_steps._dependency_paths(text) == ["a.cu", "/usr/include/with space.h", "/usr/include/b.h"]
