"""The torch-free kernel format's builder (python/kbench/worker/native_candidate.py): the .cu
example builds with nvcc alone, a second build of the same source is found in the cache, a
broken .cu names its line, and the static rules of the format. nvcc runs on a machine without a
GPU, so this runs in CI; the GPU tests run the kernels (docs/gpu-validation.md)."""

import os
import shutil
from pathlib import Path

import pytest

from kbench.worker import native_candidate
from kbench.worker.errors import PhaseError
from kbench.worker.static_check import analyse

ROOT = Path(__file__).resolve().parents[2]
RELU_CU = ROOT / "examples" / "native" / "level1_relu.cu"
HAVE_NVCC = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc").exists() or shutil.which("nvcc")


@pytest.mark.skipif(not HAVE_NVCC, reason="no nvcc (CUDA toolkit) on this machine: skipped")
def test_the_cuda_example_builds_with_nvcc_alone_and_once(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    library, seconds, cached = native_candidate.build(RELU_CU, tmp_path)
    assert library.exists() and not cached and seconds > 0
    print(f"nvcc build of {RELU_CU.name}: {seconds:.2f} s")
    again, seconds_again, cached_again = native_candidate.build(RELU_CU, tmp_path)
    assert again == library and cached_again and seconds_again == 0
    assert not list(tmp_path.rglob("*.partial"))


@pytest.mark.skipif(not HAVE_NVCC, reason="no nvcc (CUDA toolkit) on this machine: skipped")
def test_a_broken_cu_file_is_a_compile_error_naming_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    broken = tmp_path / "broken.cu"
    broken.write_text('#include "kbench_kernel.h"\n__global__ void k() {}\n'
                      'extern "C" int kbench_forward(const kbench_tensor*, int32_t, kbench_tensor*, int32_t, void*) {\n'
                      "  return nope;\n}\n")
    with pytest.raises(PhaseError) as failure:
        native_candidate.build(broken, tmp_path / "build")
    assert failure.value.status == "compile_error"
    assert "broken.cu(4): error" in failure.value.message, failure.value.message


def test_the_arch_list_becomes_gencode_flags(monkeypatch):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "8.0;9.0+PTX")
    assert native_candidate._arch_flags() == [
        "-gencode", "arch=compute_80,code=sm_80",
        "-gencode", "arch=compute_90,code=sm_90", "-gencode", "arch=compute_90,code=compute_90"]


def test_the_formats_static_rules():
    source = RELU_CU.read_text()
    answer = analyse(source, str(RELU_CU), "auto", "default")
    assert answer["backend"] == "cuda" and answer["verdicts"] == []
    assert answer["dynamic_rules"][0]["own_kernels"] == ["relu_kernel", "relu_tail"]
    no_kernel = analyse('extern "C" int kbench_forward() { return 0; }', "k.cu", "auto", "default")
    assert [v["rule"] for v in no_kernel["verdicts"]] == ["kernel-required"]
    no_entry = analyse("__global__ void k() {}", "k.cu", "auto", "default")
    assert [v["rule"] for v in no_entry["verdicts"]] == ["native-entry"]
    vendor = analyse('#include <cublas_v2.h>\n__global__ void k() {}\nint kbench_forward() { return 0; }',
                     "k.cu", "auto", "default")
    assert [(v["rule"], v["line"]) for v in vendor["verdicts"]] == [("library-compute", 1)]
    structural = analyse('extern "C" int kbench_forward() { return 0; }', "k.cu", "auto", "structural")
    assert structural["verdicts"] == []
