#pragma once
// A job for the fork server, as it travels over the control socket (private to src/sandbox/):
// what the child needs of the SpawnSpec (argv, environment, working directory, limits) and of
// the Prepared that kbench made for it (spawn_prepare.cpp). The Landlock ruleset travels as a
// descriptor beside it (SCM_RIGHTS), so the child applies exactly what a spawned worker would.
#include "sandbox/spawn_steps.hpp"

#include <nlohmann/json.hpp>

namespace kbench::sandbox {

nlohmann::json encode_job(const SpawnSpec& spec, const Prepared& prepared);
// Fills `spec` and `prepared` (all but the ruleset descriptor); throws nlohmann::json errors on
// a malformed job.
void decode_job(const nlohmann::json& job, SpawnSpec& spec, Prepared& prepared);

// The descriptors that travel with a job, in this order; the ruleset is last when present.
enum JobFd : int { kJobStdin, kJobStdout, kJobStderr, kJobResponse, kJobErrors, kJobLandlock };
inline constexpr int kJobFds = 6;
// A job message's largest size (the seccomp programs and the environment are its bulk).
inline constexpr std::size_t kMaxJobBytes = 1u << 20;

} // namespace kbench::sandbox
