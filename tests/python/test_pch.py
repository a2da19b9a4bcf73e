"""kbench's precompiled torch/extension.h for load_inline's binding unit (python/kbench/pch.py,
light_cxx.py, header_entries.py).

The build test compiles a real CPU extension through torch's load_inline with light_cxx.py as
its compiler (about 1.5 minutes on two cores): the first build asks for the header, kbench's
builder builds it, a second extension with the same flags is compiled against it, GCC's own
`-H` trace of ninja's command shows the `.gch` loaded (`! <entry>/torch/extension.h.gch`),
ninja finds the unit up to date afterwards, and the module runs.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kbench import header_entries, light_cxx, pch


def test_the_flags_leave_out_what_names_the_unit():
    args = ["-MMD", "-MF", "main.o.d", "-DTORCH_EXTENSION_NAME=ext_a", "-DTORCH_API_INCLUDE_EXTENSION_H",
            "-isystem", "/inc", "-fPIC", "-std=c++17", "-c", "/b/main.cpp", "-o", "main.o", "-O3"]
    assert pch.binding_flags(args) == ["-DTORCH_API_INCLUDE_EXTENSION_H", "-isystem", "/inc", "-fPIC",
                                       "-std=c++17", "-O3"]


def test_the_header_is_found_where_gcc_would_find_it(tmp_path):
    for folder in ("quoted", "first", "second"):
        (tmp_path / folder / "torch").mkdir(parents=True)
        (tmp_path / folder / "torch" / "extension.h").write_text(folder)
    empty = tmp_path / "empty"
    empty.mkdir()
    system = ["-isystem", str(empty), f"-isystem{tmp_path / 'first'}", "-isystem", str(tmp_path / "second")]
    assert pch.header_folder(system) == tmp_path / "first"
    assert pch.header_folder([*system, "-I", str(tmp_path / "quoted")]) == tmp_path / "quoted"  # -I first
    assert pch.header_folder(["-isystem", str(empty)]) is None


def _request(folder, compiler, flags):
    folder.mkdir(parents=True)
    (folder / "request.json").write_text(json.dumps({"compiler": compiler, "flags": flags}))
    return folder


def test_requests_kbench_would_not_run_are_refused_and_removed(tmp_path):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no g++ on this machine")
    gxx = os.path.realpath(gxx)
    build = tmp_path / "build"
    refused = {
        "fake": (str(tmp_path / "g++"), ["-O2"]),
        "include": (gxx, ["-include", "/etc/passwd"]),
        "plugin": (gxx, ["-fplugin=/tmp/p.so"]),
        "temporary": (gxx, ["-isystem", str(tmp_path)]),  # a folder a worker could write
        "no-header": (gxx, ["-isystem", "/usr/include"]),
    }
    for name, (compiler, flags) in refused.items():
        _request(build / "ext" / pch.REQUESTS / name, compiler, flags)
    (build / "ext" / pch.REQUESTS / "garbled").mkdir()
    root = tmp_path / "pch"
    (root / "0ld").mkdir(parents=True)
    (root / "0ld" / "flags.json").write_text("{}")  # kbench's earlier layout, never used now
    said = pch.build_requests(root, [build])
    assert len(said) == len(refused) + 1
    joined = "\n".join(said)
    for reason in ("is not a system compiler", "'-include' is not on kbench's list",
                   "'-fplugin=/tmp/p.so' is not on kbench's list", "is under a temporary folder",
                   "torch/extension.h is in none of its include folders", "not a request"):
        assert reason in joined, joined
    assert not (build / "ext" / pch.REQUESTS).exists() or not any((build / "ext" / pch.REQUESTS).iterdir())
    assert not (root / "0ld").exists()
    assert [p.name for p in root.iterdir() if not p.name.startswith(".")] == []


def test_a_bad_entry_cap_is_named(monkeypatch):
    monkeypatch.setenv("KBENCH_PCH_MAX_ENTRIES", "lots")
    with pytest.raises(RuntimeError, match="KBENCH_PCH_MAX_ENTRIES='lots'"):
        header_entries.max_entries("KBENCH_PCH_MAX_ENTRIES")


def test_the_oldest_entries_go_first(tmp_path):
    for age, name in enumerate(["old", "mid", "new"]):
        (tmp_path / name).mkdir()
        marker = tmp_path / name / header_entries.MARKER
        marker.write_text("{}")
        os.utime(marker, (1000 + age, 1000 + age))
    header_entries.evict_oldest(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mid", "new"]


BUILD = textwrap.dedent('''
    import os, sys
    from kbench import light_cxx
    assert light_cxx.install()
    import torch
    from torch.utils.cpp_extension import load_inline
    ext = load_inline(sys.argv[1], cpp_sources="torch::Tensor twice(torch::Tensor x) { return x * 2; }",
                      functions=["twice"], extra_cflags=["-O1"], build_directory=sys.argv[2])
    assert ext.twice(torch.arange(3.0)).tolist() == [0.0, 2.0, 4.0]
    print("ran")
''')


def test_the_binding_unit_asks_for_the_header_then_builds_against_it(tmp_path):
    pytest.importorskip("torch")
    if shutil.which("c++") is None:
        pytest.skip("no C++ compiler on this machine")
    root = tmp_path / "pch"
    root.mkdir()
    env = dict(os.environ, KBENCH_PCH_DIR=str(root), PYTHONPATH=str(Path(pch.__file__).parents[1]))
    env.pop("KBENCH_CXX_HEADER", None)
    try:
        first, second = tmp_path / "first", tmp_path / "second"
        for name, folder in (("kbench_pch_first", first), ("kbench_pch_second", second)):
            folder.mkdir()
            if folder == second:
                said = pch.build_requests(root, [first])
                assert len(said) == 1 and " built in " in said[0], said
                assert not any((first / pch.REQUESTS).iterdir())
            done = subprocess.run([sys.executable, "-c", BUILD, name, str(folder)], capture_output=True,
                                  text=True, env=env, timeout=600)
            assert done.returncode == 0 and "ran" in done.stdout, done.stderr[-3000:]
        assert (first / "main.o.kbench-pch").read_text().startswith("not used: none built yet")
        [entry] = [p for p in root.iterdir() if not p.name.startswith(".")]
        assert (second / "main.o.kbench-pch").read_text().strip() == str(entry)
        assert "precompiled" in (second / "main.o.kbench-binding").read_text()
        assert not (second / pch.REQUESTS).exists()  # served: asks for nothing

        # What light_cxx.py ran for ninja's command (the note above), traced by GCC: `!` marks
        # the loaded .gch. (-H through light_cxx.py would change the flags, so the entry.)
        command = subprocess.run(["ninja", "-C", str(second), "-t", "commands", "main.o"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        args = shlex.split(command)
        cxx = args.index(str(Path(light_cxx.__file__))) + 1
        args = [args[cxx], "-isystem", str(entry), "-Winvalid-pch", *args[cxx + 1:], "-H"]
        args[args.index("-o") + 1] = str(tmp_path / "again.o")
        traced = subprocess.run(args, cwd=second, capture_output=True, text=True)
        assert traced.returncode == 0, traced.stdout[-3000:] + traced.stderr[-3000:]
        trace = traced.stdout + traced.stderr
        assert f"! {entry}/torch/extension.h.gch" in trace, trace[:2000]
        assert "not used because" not in trace
        again = subprocess.run(["ninja", "-C", str(second), "-n", "-d", "explain"], capture_output=True,
                               text=True, env=env)
        assert "no work to do" in again.stdout, again.stdout + again.stderr
    finally:
        shutil.rmtree(root, ignore_errors=True)  # the header is about 750 MB
