#include "counters/gpu_specs.hpp"
