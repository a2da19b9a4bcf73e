// ReLU in kbench's torch-free kernel format, for the CPU (docs/native-kernels.md): one function,
// no torch headers, built by g++ alone. The GPU version is level1_relu.cu beside it.
#include "kbench_kernel.h"

#include <cstdint>

extern "C" int kbench_forward(const kbench_tensor* inputs, int32_t num_inputs,
                              kbench_tensor* outputs, int32_t num_outputs, void* /*stream*/) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != KBENCH_FLOAT32) {
    return 1;
  }
  int64_t n = 1;
  for (int32_t d = 0; d < inputs[0].ndim; ++d) {
    n *= inputs[0].shape[d];
  }
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    y[i] = x[i] > 0.f ? x[i] : 0.f;
  }
  return 0;
}
