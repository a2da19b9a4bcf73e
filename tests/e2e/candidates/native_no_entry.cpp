// Defines a kernel-like function but not the format's entry point: rejected before any build.
extern "C" int forward(float* y, const float* x, long n) {
  for (long i = 0; i < n; ++i) {
    y[i] = x[i] > 0.f ? x[i] : 0.f;
  }
  return 0;
}
