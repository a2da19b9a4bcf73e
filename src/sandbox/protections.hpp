#pragma once
// The parent's reading of what the child reported: one Protection per protection the spawn
// asked for, with how it is enforced or why it is not. A pure function of the spec, what the
// parent prepared and the child's step records, so that every branch of it (the fallbacks a
// given kernel never takes) can be checked without that kernel (tests/unit/test_protections.cpp).
#include "sandbox/process.hpp"
#include "sandbox/spawn_steps.hpp"

#include <string>
#include <vector>

namespace kbench::sandbox {

// "EPERM", "EACCES", ... for the errors the sandbox steps meet; strerror's text otherwise.
std::string errno_name(int error);

// `step` holds each step's 0, errno or kNotTried, as the child reported them.
std::vector<Protection> protections_from(const SpawnSpec& spec, const Prepared& prepared,
                                         const StepErrors& step);

} // namespace kbench::sandbox
