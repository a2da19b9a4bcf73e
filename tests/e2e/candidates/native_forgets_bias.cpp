// Wrong on purpose: relu(x W^T) without the bias. It must be graded incorrect.
#include "kbench_kernel.h"

#include <cstdint>

extern "C" int kbench_forward(const kbench_tensor* in, int32_t, kbench_tensor* out, int32_t,
                              void*) {
  const int64_t batch = in[0].shape[0], features = in[0].shape[1], outs = in[1].shape[0];
  const auto* x = static_cast<const float*>(in[0].data);
  const auto* w = static_cast<const float*>(in[1].data);
  auto* y = static_cast<float*>(out[0].data);
  for (int64_t r = 0; r < batch; ++r) {
    for (int64_t o = 0; o < outs; ++o) {
      float acc = 0.f;
      for (int64_t k = 0; k < features; ++k) {
        acc += x[r * features + k] * w[o * features + k];
      }
      y[r * outs + o] = acc > 0.f ? acc : 0.f;
    }
  }
  return 0;
}
