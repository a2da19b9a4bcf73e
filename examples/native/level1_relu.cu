// ReLU in kbench's torch-free kernel format (docs/native-kernels.md): a kernel and the launch
// function kbench calls, no torch headers, so nvcc builds it in a second or two (a load_inline
// build of the same kernel parses torch's headers twice and takes 45-70 s on the H200 host).
#include "kbench_kernel.h"

#include <cuda_runtime.h>

#include <cstdint>

__global__ void relu_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4;
       i += int64_t(gridDim.x) * blockDim.x) {
    float4 v = x[i];
    v.x = fmaxf(v.x, 0.f);
    v.y = fmaxf(v.y, 0.f);
    v.z = fmaxf(v.z, 0.f);
    v.w = fmaxf(v.w, 0.f);
    y[i] = v;
  }
}

__global__ void relu_tail(const float* __restrict__ x, float* __restrict__ y, int64_t from,
                          int64_t n) {
  const int64_t i = from + blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    y[i] = fmaxf(x[i], 0.f);
  }
}

static const char* last_error = "";

extern "C" const char* kbench_error(void) { return last_error; }

extern "C" int kbench_forward(const kbench_tensor* inputs, int32_t num_inputs,
                              kbench_tensor* outputs, int32_t num_outputs, void* stream) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != KBENCH_FLOAT32) {
    last_error = "expects one float32 input and one output";
    return 1;
  }
  int64_t n = 1;
  for (int32_t d = 0; d < inputs[0].ndim; ++d) {
    n *= inputs[0].shape[d];
  }
  const auto* x = static_cast<const float*>(inputs[0].data);
  auto* y = static_cast<float*>(outputs[0].data);
  const auto s = static_cast<cudaStream_t>(stream);
  const int64_t n4 = n / 4; // torch's allocations are 512-byte aligned: float4 is safe
  if (n4 > 0) {
    relu_kernel<<<132 * 8, 256, 0, s>>>(reinterpret_cast<const float4*>(x),
                                        reinterpret_cast<float4*>(y), n4);
  }
  if (n % 4) {
    relu_tail<<<1, 256, 0, s>>>(x, y, n4 * 4, n);
  }
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    last_error = cudaGetErrorString(error);
    return 2;
  }
  return 0;
}
