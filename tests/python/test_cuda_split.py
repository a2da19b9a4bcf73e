"""python/kbench/cuda_split.py and split_build.py: a load_inline CUDA unit built as a device unit
without torch and a host unit for the host compiler, joined into the one object.

The split itself is text; the builds run the toolkit's real nvcc and the host compiler on units
without torch (they compile without a GPU, and skip where there is no toolkit). The torch build
is bench/cold_build's (`light+host+bind+aten+split`) and, on a GPU, every CUDA example's
verdict (docs/gpu-validation.md).
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kbench import cuda_split, light_nvcc, split_build

NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
needs_toolkit = pytest.mark.skipif(not os.access(NVCC, os.X_OK) or shutil.which("gcc") is None,
                                   reason="no CUDA toolkit (nvcc) or gcc here")

UNIT = textwrap.dedent('''\
    #include <torch/extension.h>
    #include <ATen/cuda/CUDAContext.h>
    #include <cuda_fp16.h>
    #define BLOCK 256
    constexpr int kUnroll = 4;
    struct Pair { float a, b; };
    __constant__ float scale_table[16];
    __device__ __forceinline__ float twice(float x) { return 2.f * x; }
    __host__ __device__ inline int ceil_div(int a, int b) { return (a + b - 1) / b; }
    // a comment with <<< and { that is not code
    __global__ void __launch_bounds__(BLOCK) scale_kernel(const float* __restrict__ x, float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = twice(x[i]) * scale_table[0];
    }
    static void check(const torch::Tensor& t) { TORCH_CHECK(t.is_cuda(), "x must be CUDA; {"); }
    torch::Tensor scale(torch::Tensor x) {
      check(x);
      auto y = torch::empty_like(x);
      int n = x.numel();
      scale_kernel<<<ceil_div(n, BLOCK), BLOCK, 0, at::cuda::getCurrentCUDAStream()>>>(
          x.data_ptr<float>(), y.data_ptr<float>(), n);
      return y;
    }
''')


def test_the_kernels_go_to_a_device_unit_without_torch_and_the_launches_to_host_code():
    parts = cuda_split.split(UNIT, "/ext/cuda.cu")
    assert parts.kernels == ["scale_kernel"] and parts.launches == 1
    device, host = parts.device, parts.host
    assert "torch" not in device.replace('"/ext/cuda.cu"', "") and "ATen" not in device
    for shared in ("#include <cuda_fp16.h>", "#define BLOCK 256", "constexpr int kUnroll", "struct Pair",
                   "inline int ceil_div"):
        assert shared in device and shared in host, shared
    for device_only in ("__constant__ float scale_table", "float twice(float x)", "y[i] = twice"):
        assert device_only in device and device_only not in host, device_only
    assert "torch::Tensor scale(" not in device and "static void check" not in device
    # The host unit declares the kernel (its nvcc host stub) and launches it as cudafe++ does.
    assert "__global__ void   scale_kernel(const float* __restrict__ x, float* y, int n);" in host
    assert "__launch_bounds__" not in host  # the host compiler does not know it
    assert "((__cudaPushCallConfiguration(ceil_div(n, BLOCK), BLOCK, 0, at::cuda::getCurrentCUDAStream()))" \
        " ? (void)0 : scale_kernel(\n      x.data_ptr<float>(), y.data_ptr<float>(), n))" in host
    assert host.startswith("#include <cuda_runtime.h>\n" + cuda_split.PUSH)
    # Each item keeps the candidate's line numbers for the diagnostics.
    assert '#line 11 "/ext/cuda.cu"\n__global__ void __launch_bounds__(BLOCK) scale_kernel' in device
    assert '#line 16 "/ext/cuda.cu"\ntorch::Tensor scale(' in host


def test_literals_and_comments_are_not_read_as_code():
    text = UNIT.replace("check(x);", 'check(x); const char* s = "<<<not a launch>>>(; {"; (void)s;')
    text += 'const char* raw = R"x(scale_kernel<<<1,1>>>(nullptr, nullptr, 0); })x";\n'
    parts = cuda_split.split(text, "cuda.cu")
    assert parts.launches == 1 and '"<<<not a launch>>>(; {"' in parts.host and 'R"x(scale_kernel<<<1,1>>>' in parts.host


@pytest.mark.parametrize("change, why", [
    (("__global__ void __launch_bounds__(BLOCK) scale_kernel", "template <typename T> __global__ void scale_kernel"),
     None),  # below: instantiated for at::Half
    (("__global__ void __launch_bounds__(BLOCK)", "static __global__ void"), "a static kernel"),
    (("struct Pair { float a, b; };", "namespace detail { struct Pair { float a, b; }; }"), "a namespace or linkage block"),
    (("#include <cuda_fp16.h>", '#include "helpers.cuh"'), "a quoted include"),
    (("struct Pair { float a, b; };", "#ifdef USE_PAIR\nstruct Pair { float a, b; };\n#endif"),
     "a preprocessor conditional around declarations"),
    (("scale_kernel<<<", "other_kernel<<<"), "a launch of a kernel the unit does not define"),
    (("check(x);", "check(x); cudaMemcpyToSymbol(scale_table, x.data_ptr<float>(), 4);"),
     "host code that names a device-only declaration"),
    (("check(x);", "check(x);\n#ifdef __CUDACC__\n#endif"), "host code that tests nvcc"),
    (("__host__ __device__ inline int", "__host__ __device__ int"), "a __host__ __device__ function with external linkage"),
    (("extern", "extern"), None),
])
def test_what_the_split_does_not_know_is_built_whole(change, why):
    text = UNIT.replace(*change)
    if why is None and "template" in text:
        text = text.replace("scale_kernel<<<", "scale_kernel<at::Half><<<")
        why = "a template kernel that may be instantiated for torch's own types"
    elif why is None:
        text += 'extern "C" { void exported(); }\n'
        why = "a namespace or linkage block"
    with pytest.raises(cuda_split.Unfit, match=why):
        cuda_split.split(text, "cuda.cu")


def test_a_template_kernel_is_declared_for_the_host_and_launched_with_its_arguments():
    text = UNIT.replace("__global__ void __launch_bounds__(BLOCK) scale_kernel",
                        "template <typename T, int UNROLL>\n__global__ void scale_kernel")
    text = text.replace("scale_kernel<<<", "scale_kernel<float, kUnroll> <<<")
    parts = cuda_split.split(text, "cuda.cu")
    assert parts.kernels == ["scale_kernel"] and parts.templates == ["scale_kernel"]
    assert "template <typename T, int UNROLL>\n__global__ void scale_kernel(const float* __restrict__ x, float* y, int n);" \
        in parts.host
    assert ": scale_kernel<float, kUnroll>(\n      x.data_ptr<float>()" in parts.host


def test_a_unit_without_a_launch_is_left_whole():
    with pytest.raises(cuda_split.Unfit, match="no kernel launch"):
        cuda_split.split("#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x) { return x; }\n", "cuda.cu")


def test_nvcc_flags_become_the_host_compile_s_or_are_refused():
    compiler, flags = split_build.host_flags(
        ["-DTORCH_EXTENSION_NAME=ext", "-isystem", "/torch/include", "-D__CUDA_NO_HALF_OPERATORS__",
         "--expt-relaxed-constexpr", "-gencode=arch=compute_90,code=sm_90", "-gencode", "arch=compute_90,code=sm_90",
         "--compiler-options", "-fPIC,-Wall", "-O3", "-std=c++17", "--use_fast_math", "-Xptxas", "-v",
         "-ccbin", "/usr/bin/gcc-12", "-lineinfo"])
    assert compiler == "/usr/bin/gcc-12"
    assert flags == ["-DTORCH_EXTENSION_NAME=ext", "-isystem", "/torch/include", "-D__CUDA_NO_HALF_OPERATORS__",
                     "-fPIC", "-Wall", "-O3", "-std=c++17"]
    with pytest.raises(split_build.cuda_split.Unfit, match="nvcc flag --default-stream"):  # its own import
        split_build.host_flags(["--default-stream", "per-thread"])


PLAIN = textwrap.dedent('''\
    #include <cuda_runtime.h>
    __device__ float twice(float x) { return 2.f * x; }
    __global__ void twice_kernel(const float* x, float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = twice(x[i]);
    }
    void launch_twice(const float* x, float* y, int n, cudaStream_t stream) {
      twice_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);
    }
''')


def _symbols(path):
    return subprocess.run(["nm", "-C", str(path)], capture_output=True, text=True, check=True).stdout


def _light_nvcc(tmp_path, text, env=None):
    source = tmp_path / "cuda.cu"
    source.write_text(text)
    target = tmp_path / "cuda.cuda.o"
    args = ["-MD", "-MF", f"{target}.d", "-gencode=arch=compute_90,code=sm_90", "--compiler-options", "-fPIC",
            "-O3", "-std=c++17", "-c", str(source), "-o", str(target)]
    run = subprocess.run([sys.executable, "-I", "-S", light_nvcc.__file__, NVCC, *args], capture_output=True,
                         text=True, env={**os.environ, **(env or {})})
    return run, target


@needs_toolkit
def test_the_joined_object_holds_the_kernel_its_stub_and_the_launching_host_code(tmp_path):
    run, target = _light_nvcc(tmp_path, PLAIN)
    assert run.returncode == 0, run.stdout + run.stderr
    note = Path(f"{target}.kbench-header").read_text()
    assert note.startswith("split: 1 kernel(s) in a device unit without torch"), note
    symbols = _symbols(target)
    # The kernel's host stub, defined by the device unit, called by the host unit's launch.
    assert " T twice_kernel(float const*, float*, int)" in symbols
    assert " T launch_twice(float const*, float*, int, CUstream_st*)" in symbols
    assert "U __cudaPushCallConfiguration" in symbols and "__cudaRegisterFatBinary" in symbols
    sections = subprocess.run(["objdump", "-h", str(target)], capture_output=True, text=True, check=True).stdout
    assert ".nv_fatbin" in sections and ".init_array" in sections  # the kernels and their registration
    # The host unit wrote the dependency file ninja reads, for the object ninja asked for.
    assert Path(f"{target}.d").read_text().startswith(f"{target}:")
    # The same unit whole defines the same host-side symbols.
    (tmp_path / "whole").mkdir()
    whole, whole_target = _light_nvcc(tmp_path / "whole", PLAIN, env={"KBENCH_CUDA_SPLIT": "off"})
    assert whole.returncode == 0, whole.stdout + whole.stderr
    defined = lambda text: sorted(line.split(" ", 2)[2] for line in text.splitlines()
                                  if " T " in line and "__device_stub" not in line)
    assert defined(symbols) == defined(_symbols(whole_target))


TEMPLATED = textwrap.dedent('''\
    #include <cuda_runtime.h>
    template <typename T, bool NEGATE>
    __global__ void twice_kernel(const T* x, T* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = NEGATE ? -2 * x[i] : 2 * x[i];
    }
    template <typename T>
    void launch_twice(const T* x, T* y, int n, bool negate, cudaStream_t stream) {
      if (negate) twice_kernel<T, true><<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);
      else twice_kernel<T, false><<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);
    }
    void launch_float(const float* x, float* y, int n, cudaStream_t s) { launch_twice(x, y, n, false, s); }
    void launch_double(const double* x, double* y, int n, cudaStream_t s) { launch_twice(x, y, n, true, s); }
''')


@needs_toolkit
def test_a_template_kernel_is_instantiated_in_the_device_unit_as_the_host_code_launches_it(tmp_path):
    run, target = _light_nvcc(tmp_path, TEMPLATED)
    assert run.returncode == 0, run.stdout + run.stderr
    assert Path(f"{target}.kbench-header").read_text().startswith("split: 1 kernel(s)")
    symbols = _symbols(target)
    # What the host code launches (double with NEGATE, float without) and nothing else, each
    # stub global (weak, as nvcc makes a template's when it is not static) for the host's call.
    assert " W void twice_kernel<double, true>(double const*, double*, int)" in symbols
    assert " W void twice_kernel<float, false>(float const*, float*, int)" in symbols
    assert "twice_kernel<float, true>" not in symbols and " U void twice_kernel" not in symbols
    device = (tmp_path / "kbench-light" / "cuda.kernels.cu").read_text()
    assert "template __global__ void twice_kernel<float, false>(float const*, float*, int);" in device


@needs_toolkit
def test_a_unit_whose_device_code_does_not_compile_is_built_whole_and_its_error_is_nvcc_s(tmp_path):
    run, target = _light_nvcc(tmp_path, PLAIN.replace("twice(x[i])", "twice(x[i], undeclared_name)"))
    assert run.returncode != 0
    assert "undeclared_name" in run.stdout + run.stderr
    note = Path(f"{target}.kbench-header").read_text()
    assert "not split: the device unit did not compile" in note, note


@needs_toolkit
def test_switched_off_the_unit_is_built_whole(tmp_path):
    run, target = _light_nvcc(tmp_path, PLAIN, env={"KBENCH_CUDA_SPLIT": "off"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "not split: KBENCH_CUDA_SPLIT=off" in Path(f"{target}.kbench-header").read_text()
    assert not (tmp_path / "kbench-light" / "cuda.kernels.cu").exists()
