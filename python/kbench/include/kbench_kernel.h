/* kbench's torch-free kernel format (docs/native-kernels.md): a candidate that is one .cu file
 * (or one .cpp file for the CPU) defining kbench_forward. kbench builds it with nvcc (g++) alone,
 * in a second or two, and calls it with the problem's inputs and the outputs it allocated. */
#ifndef KBENCH_KERNEL_H
#define KBENCH_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kbench_dtype {
  KBENCH_FLOAT32 = 0,
  KBENCH_FLOAT16 = 1,
  KBENCH_BFLOAT16 = 2,
  KBENCH_FLOAT64 = 3,
  KBENCH_INT32 = 4,
  KBENCH_INT64 = 5,
  KBENCH_INT8 = 6,
  KBENCH_UINT8 = 7,
  KBENCH_BOOL = 8,
};

/* A tensor on the evaluation's device: `data` is a device pointer on a GPU, a host pointer on
 * the CPU; `shape` and `strides` (in elements, not bytes) have `ndim` entries. Outputs are
 * contiguous; inputs are as the problem made them (most are contiguous: check the strides). */
typedef struct {
  void* data;
  const int64_t* shape;
  const int64_t* strides;
  int32_t ndim;
  int32_t dtype; /* enum kbench_dtype */
} kbench_tensor;

/* inputs: the forward arguments, in order, then every tensor of the problem's
 * Model(*get_init_inputs()).state_dict() (its parameters and buffers, in that order).
 * outputs: what Model.forward returns, allocated by kbench with the reference's shapes and
 * dtypes. `stream` is the cudaStream_t to launch on (NULL on the CPU). Returns 0 on success;
 * any other value is an error, and kbench_error(), when defined, says which. */
int kbench_forward(const kbench_tensor* inputs, int32_t num_inputs, kbench_tensor* outputs,
                   int32_t num_outputs, void* stream);

/* Optional: a message for the last nonzero return of kbench_forward. */
const char* kbench_error(void);

#ifdef __cplusplus
}
#endif

#endif
