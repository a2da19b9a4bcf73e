"""The static rules against reaching kbench's own modules and patching from C++ (static_rules/
tampering.py, `harness-import` and `patching`) and against C++ threads (`concurrency-and-io`):
each fires on its construct and stays quiet on what honest candidates write
(docs/static-checks.md)."""

import textwrap

import pytest

from kbench.worker.static_check import check_source

HEADER = '''\
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
'''


def _source(body):
    return HEADER + textwrap.dedent(body)


def _cpp(cpp):
    return _source(f'''
_CPP = r"""
#include <torch/extension.h>
{cpp}
torch::Tensor run(torch::Tensor x) {{ return torch::empty_like(x); }}
"""
_ext = load_inline(name="kbench_relu", cpp_sources=_CPP, functions=["run"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.run(x)
''')


def _rejects(source, rule):
    return [v for v in check_source(source, "cand.py") if v["rule"] == rule and v["severity"] == "reject"]


@pytest.mark.parametrize("line", [
    "import kbench_native",
    "import kbench.worker.native as n",
    "from kbench.worker import tracing",
    "from kbench_native import cupti_stop",
    "import importlib; m = importlib.import_module('kbench_native')",
    "import sys; kn = sys.modules['kbench.worker.tracing'].kn",
])
def test_harness_modules_are_rejected(line):
    source = _cpp("") + line + "\n"
    assert _rejects(source, "harness-import"), line


def test_cpp_that_imports_kbench_native_is_rejected():
    assert _rejects(_cpp('static void stop() { pybind11::module_::import("kbench_native").attr("cupti_stop")(); }'),
                    "harness-import")


def test_an_extension_named_kbench_something_is_not_the_harness():
    assert _rejects(_cpp(""), "harness-import") == []


@pytest.mark.parametrize("cpp", [
    'void install() { py::object t = py::module_::import("torch").attr("Tensor"); t.attr("detach") = py::none(); }',
    'void install(PyObject* t, PyObject* f) { PyObject_SetAttrString(t, "detach", f); }',
    'void install(py::object t, py::object f) { py::setattr(t, "clone", f); }',
    'TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("clone", [](const at::Tensor& x, c10::optional<c10::MemoryFormat>) { return x; }); }',
    'void swap(PyMethodDescrObject* d, PyCFunction f) { d->d_method->ml_meth = f; }',
])
def test_cpp_patching_is_rejected(cpp):
    assert _rejects(_cpp(cpp), "patching"), cpp


def test_a_module_attribute_of_the_extensions_own_is_not_patching():
    cpp = 'PYBIND11_MODULE(my_relu, m) { m.attr("version") = 2; }'
    assert _rejects(_cpp(cpp), "patching") == []


@pytest.mark.parametrize("cpp", [
    "void later(torch::Tensor y) { std::thread([y] { y.zero_(); }).detach(); }",
    "void later() { pthread_t t; pthread_create(&t, nullptr, nullptr, nullptr); }",
    "void later(torch::Tensor y) { auto f = std::async(std::launch::async, [y] { y.zero_(); }); }",
])
def test_cpp_threads_are_rejected(cpp):
    assert _rejects(_cpp(cpp), "concurrency-and-io"), cpp


def test_openmp_and_hardware_concurrency_are_not_threads_of_the_candidates():
    cpp = ("int workers() { return (int)std::thread::hardware_concurrency(); }\n"
           "void loop(float* y, long n) {\n#pragma omp parallel for\nfor (long i = 0; i < n; ++i) y[i] = 0; }")
    assert _rejects(_cpp(cpp), "concurrency-and-io") == []
