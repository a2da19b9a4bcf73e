// relu(x W^T + b) in the torch-free kernel format (CPU): inputs are x, then the Model's
// state_dict, linear.weight (out, in) and linear.bias (out).
#include "kbench_kernel.h"

#include <cstdint>

extern "C" int kbench_forward(const kbench_tensor* in, int32_t num_inputs, kbench_tensor* out,
                              int32_t num_outputs, void*) {
  if (num_inputs != 3 || num_outputs != 1) {
    return 1;
  }
  const int64_t batch = in[0].shape[0], features = in[0].shape[1], outs = in[1].shape[0];
  const auto* x = static_cast<const float*>(in[0].data);
  const auto* w = static_cast<const float*>(in[1].data);
  const auto* b = static_cast<const float*>(in[2].data);
  auto* y = static_cast<float*>(out[0].data);
  for (int64_t r = 0; r < batch; ++r) {
    for (int64_t o = 0; o < outs; ++o) {
      float acc = b[o];
      for (int64_t k = 0; k < features; ++k) {
        acc += x[r * features + k] * w[o * features + k];
      }
      y[r * outs + o] = acc > 0.f ? acc : 0.f;
    }
  }
  return 0;
}
