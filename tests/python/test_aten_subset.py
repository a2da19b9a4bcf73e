"""python/kbench/aten_subset.py: kbench's ATen/Functions.h, with only the operators torch's
headers and the unit name.

Most tests use a small torch include tree of their own (three operators, a torch/types.h that
calls one); the last builds a real binding unit with and without the subset and compares the
objects, where this machine has torch's headers and a C++ compiler.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kbench import aten_subset, host_pch, light_cxx


def test_used_names_count_calls_and_at_qualified_names_only():
    text = textwrap.dedent('''\
        namespace at {
        inline Tensor declared_here(const Tensor& x) { return at::qualified(x) + unqualified(x); }
        inline Tensor Tensor::member_definition() const { return at::_ops::op_struct::call(*this); }
        }
        void f(Tensor x) { x.method_call(); std::std_function(1); torch::torch_qualified(x); int not_called; }
    ''')
    used = aten_subset.used_names(text)
    assert {"qualified", "unqualified", "torch_qualified"} <= used
    assert not used & {"declared_here", "member_definition", "op_struct", "method_call",
                       "std_function", "not_called"}


def test_a_word_names_every_operator_it_or_a_prefix_could_be():
    ops = {"add", "add_relu", "zeros", "_foo"}
    assert aten_subset.operators_named({"add_relu_out"}, ops) == {"add", "add_relu"}
    assert aten_subset.operators_named({"zeros_like", "_foo_out", "additional"}, ops) == {"zeros", "_foo"}


def fake_torch(tmp_path):
    """A torch include folder: ATen/Functions.h listing keep, drop and foreign; torch/types.h
    calls at::keep; foreign's header declares a name not its own, so it is never dropped."""
    root = tmp_path / "torch" / "include"
    ops = root / "ATen" / "ops"
    ops.mkdir(parents=True)
    for op in ("keep", "drop", "named"):
        (ops / f"{op}.h").write_text(f"namespace at {{ inline int {op}(int x) {{ return x; }}\n"
                                     f"inline int {op}_out(int x) {{ return x; }} }}\n")
    (ops / "foreign.h").write_text("namespace at { inline int helper_of_foreign(int x) { return x; } }\n")
    (root / "ATen" / "Functions.h").write_text(
        "#pragma once\n" + "".join(f"#include <ATen/ops/{op}.h>\n" for op in ("keep", "drop", "named", "foreign")))
    api = root / "torch" / "csrc" / "api" / "include" / "torch"
    api.mkdir(parents=True)
    (api / "types.h").write_text("#include <ATen/Functions.h>\n#include <torch/other.h>\n"
                                 "namespace torch { inline int t(int x) { return at::keep(x); } }\n")
    (api / "other.h").write_text("// at::drop( in a comment names nothing\nint other_thing(int);\n")
    (api / "unread.h").write_text("int unread(int);\n")
    (root.parent / "version.py").write_text("__version__ = '0.0'\n")
    return root


@pytest.fixture
def entry_root(tmp_path, monkeypatch):
    """kbench's root with the fake torch's entry built (the fake torch lives under /tmp, which
    the builder refuses for a real install)."""
    monkeypatch.setattr(host_pch, "include_folder_problem", lambda folder, temporary_ok=False: "")
    torch_include = fake_torch(tmp_path)
    root = tmp_path / "aten-subset"
    said = aten_subset.build(root, torch_include)
    assert "2 of 3 operators kept" not in said and "1 of 3 operators kept" in said, said
    monkeypatch.setenv("KBENCH_ATEN_SUBSET_DIR", str(root))
    return root, torch_include


def test_the_entry_keeps_what_torch_headers_call_and_every_header_that_declares_other_names(entry_root):
    root, torch_include = entry_root
    (entry,) = [p for p in root.iterdir() if not p.name.startswith(".")]
    text = (entry / "ATen" / "Functions.h").read_text()
    assert "<ATen/ops/keep.h>" in text and "<ATen/ops/foreign.h>" in text
    assert "<ATen/ops/drop.h>" not in text and "<ATen/ops/named.h>" not in text
    recorded = json.loads((entry / "entry.json").read_text())
    assert recorded["kept"] == ["keep"] and sorted(recorded["droppable"]) == ["drop", "keep", "named"]
    assert "torch/csrc/api/include/torch/other.h" in recorded["read"]
    assert oct(entry.stat().st_mode & 0o777) == "0o755"
    assert oct((entry / "entry.json").stat().st_mode & 0o777) == "0o644"
    assert "built already" in aten_subset.build(root, torch_include)


def unit_args(torch_include, source):
    return ["-isystem", str(torch_include), "-isystem", str(torch_include / "torch/csrc/api/include"),
            "-c", str(source), "-o", str(source) + ".o"]


def test_a_unit_gets_the_operators_it_names_after_torch_headers_with_its_own_line_numbers(entry_root, tmp_path):
    root, torch_include = entry_root
    source = tmp_path / "cuda.cu"
    text = "#include <torch/types.h>\nint f(int x) { return at::named_out(x); }\n"
    flags, planned, note = aten_subset.plan(text, source, unit_args(torch_include, source), "#include <torch/types.h>")
    assert flags[0] == "-I" and Path(flags[1]).parent == root
    assert planned == ("#include <torch/types.h>\n#include <ATen/ops/named.h>\n#line 2\n"
                       "int f(int x) { return at::named_out(x); }\n")
    assert note == "kbench's ATen/Functions.h: 2 of 3 operators (1 named by the unit)"


def test_a_unit_that_names_nothing_more_is_left_as_it_is(entry_root, tmp_path):
    root, torch_include = entry_root
    source = tmp_path / "main.cpp"
    text = "#include <torch/types.h>\nint f(int x) { return x; }\n"
    flags, planned, _ = aten_subset.plan(text, source, unit_args(torch_include, source), "#include <torch/types.h>")
    assert flags and planned == text


def test_a_unit_that_includes_a_torch_header_the_entry_did_not_read_keeps_torch_s_header(entry_root, tmp_path):
    _, torch_include = entry_root
    source = tmp_path / "main.cpp"
    text = "#include <torch/types.h>\n#include <torch/unread.h>\n"
    assert aten_subset.plan(text, source, unit_args(torch_include, source), "#include <torch/types.h>") == (
        None, None, "it includes torch/unread.h, which kbench's reading of torch did not cover")


def test_a_unit_s_own_headers_are_read_for_the_names_they_call(entry_root, tmp_path):
    _, torch_include = entry_root
    own = tmp_path / "own"
    own.mkdir()
    (own / "helpers.h").write_text("inline int g(int x) { return at::drop(x); }\n")
    source = tmp_path / "main.cpp"
    text = '#include <torch/types.h>\n#include "helpers.h"\n'
    _, planned, _ = aten_subset.plan(text, source, ["-I", str(own), *unit_args(torch_include, source)],
                                     "#include <torch/types.h>")
    assert "#include <ATen/ops/drop.h>" in planned


def test_nothing_offered_or_built_leaves_torch_s_header(tmp_path, monkeypatch):
    torch_include = fake_torch(tmp_path)
    source = tmp_path / "main.cpp"
    monkeypatch.delenv("KBENCH_ATEN_SUBSET_DIR", raising=False)
    assert aten_subset.plan("", source, unit_args(torch_include, source), "x")[2] == "not offered"
    monkeypatch.setenv("KBENCH_ATEN_SUBSET_DIR", str(tmp_path / "empty"))
    assert aten_subset.plan("", source, unit_args(torch_include, source), "x")[2] == \
        "none built for this torch install"


def test_the_host_compile_takes_an_entry_folder_and_nothing_that_only_looks_like_one(entry_root, tmp_path):
    root, _ = entry_root
    (entry,) = [p for p in root.iterdir() if not p.name.startswith(".")]
    assert host_pch._aten_entry(str(entry))
    fake = tmp_path / entry.name
    shutil.copytree(entry, fake)
    (fake / "crt").mkdir()
    assert not host_pch._aten_entry(str(fake))


def _real_torch_include():
    folder = aten_subset.installed_torch_include()
    if folder is None or shutil.which("c++") is None:
        pytest.skip("no torch with C++ headers, or no c++, in this environment")
    if host_pch.include_folder_problem(str(folder)):
        pytest.skip(f"torch's include folder is not one kbench builds from: {host_pch.include_folder_problem(str(folder))}")
    return folder


def test_a_real_binding_unit_builds_to_the_same_object_with_the_subset(tmp_path, monkeypatch):
    torch_include = _real_torch_include()
    root = tmp_path / "aten-subset"
    assert "operators kept" in aten_subset.build(root, torch_include)
    import sysconfig

    main = textwrap.dedent('''\
        #include <torch/extension.h>
        torch::Tensor f(torch::Tensor x) { return at::matmul(x, x) + torch::relu(x); }
        PYBIND11_MODULE(ext, m) { m.def("f", torch::wrap_pybind_function(f), "f"); }
    ''')
    objects = {}
    for name, offered in (("plain", False), ("subset", True)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "main.cpp").write_text(main)
        env = {k: v for k, v in os.environ.items() if k not in ("KBENCH_PCH_DIR", "KBENCH_ATEN_SUBSET_DIR")}
        if offered:
            env["KBENCH_ATEN_SUBSET_DIR"] = str(root)
        args = ["-DTORCH_API_INCLUDE_EXTENSION_H", "-isystem", str(torch_include), "-isystem",
                str(torch_include / "torch/csrc/api/include"), "-isystem", sysconfig.get_paths()["include"],
                "-fPIC", "-std=c++17", "-c", str(folder / "main.cpp"), "-o", str(folder / "main.o")]
        done = subprocess.run([sys.executable, "-I", "-S", light_cxx.__file__, "c++", *args],
                              capture_output=True, text=True, env=env, cwd=folder)
        assert done.returncode == 0, done.stdout + done.stderr
        objects[name] = folder / "main.o"
        note = (folder / "main.o.kbench-aten").read_text()
        assert note.startswith("kbench's ATen/Functions.h" if offered else "torch's ATen/Functions.h"), note
    if offered:
        assert "named by the unit" in note
    symbols = {name: subprocess.run(["nm", "-C", str(path)], capture_output=True, text=True).stdout
               for name, path in objects.items()}
    strip_addresses = lambda text: sorted(line.split(" ", 1)[-1] for line in text.splitlines())  # noqa: E731
    assert strip_addresses(symbols["plain"]) == strip_addresses(symbols["subset"])
