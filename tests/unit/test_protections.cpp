// src/sandbox/protections.cpp: the Protection list read from the child's step records, for the
// records this machine's kernel never produces (namespace fallbacks, seccomp or Landlock
// refused, a root worker under an nproc limit, steps that never ran). The texts are the ones
// results carry, so they are spelled out here in full.
#include "sandbox/protections.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <vector>

using namespace kbench::sandbox;

namespace {

// A spec that asks for nothing, so that each test sees only the protections it turns on.
SpawnSpec nothing_requested() {
  SpawnSpec spec;
  spec.argv = {"/bin/true"};
  spec.limits.open_files.reset();
  spec.limits.core_dumps = true;
  return spec;
}

StepErrors none_tried() {
  StepErrors steps{};
  steps.fill(kNotTried);
  return steps;
}

// A Prepared whose Landlock ruleset is ready (any open fd stands in for it).
Prepared with_ruleset(const std::string& detail) {
  Prepared prepared;
  prepared.restrict_filesystem = true;
  prepared.landlock_fd = UniqueFd(open("/dev/null", O_RDONLY | O_CLOEXEC));
  prepared.landlock_detail = detail;
  return prepared;
}

// The one protection of `list`, by value (the lists here are temporaries).
Protection only(const std::vector<Protection>& list, const std::string& name) {
  EXPECT_EQ(list.size(), 1U);
  for (const auto& p : list) {
    if (p.name == name) {
      return p;
    }
  }
  ADD_FAILURE() << name << " is not in the list";
  return Protection{"<missing>", false, "", ""};
}

} // namespace

TEST(Protections, ErrnoNamesAreTheSymbolsForTheSandboxsErrorsAndStrerrorOtherwise) {
  EXPECT_EQ(errno_name(EPERM), "EPERM");
  EXPECT_EQ(errno_name(EACCES), "EACCES");
  EXPECT_EQ(errno_name(EINVAL), "EINVAL");
  EXPECT_EQ(errno_name(ENOSYS), "ENOSYS");
  EXPECT_EQ(errno_name(EOPNOTSUPP), "EOPNOTSUPP");
  EXPECT_EQ(errno_name(ENOSPC), "ENOSPC");
  EXPECT_EQ(errno_name(EUSERS), "EUSERS");
  EXPECT_EQ(errno_name(ENOMEM), "ENOMEM");
  EXPECT_EQ(errno_name(EIO), std::strerror(EIO));
}

TEST(Protections, TheUserNamespaceFallbackIsolatesTheNetwork) {
  SpawnSpec spec = nothing_requested();
  spec.sandbox.isolate_network = true;
  StepErrors steps = none_tried();
  steps[kStepNetUnshare] = EPERM;
  steps[kStepNetUserns] = 0;
  steps[kStepNetLoopback] = 0;
  const auto list = protections_from(spec, Prepared{}, steps);
  const Protection network = only(list, "network");
  EXPECT_TRUE(network.active);
  EXPECT_EQ(network.detail, "own user and network namespace (unshare CLONE_NEWUSER|CLONE_NEWNET, "
                            "uid and gid mapped), loopback up");
  EXPECT_EQ(network.warning, "");
}

TEST(Protections, ALoopbackThatStaysDownKeepsTheNamespaceButWarns) {
  SpawnSpec spec = nothing_requested();
  spec.sandbox.isolate_network = true;
  StepErrors steps = none_tried();
  steps[kStepNetUnshare] = 0;
  steps[kStepNetLoopback] = EACCES;
  const Protection network = only(protections_from(spec, Prepared{}, steps), "network");
  EXPECT_TRUE(network.active);
  EXPECT_EQ(network.detail, "own network namespace (unshare CLONE_NEWNET), loopback down (EACCES)");
  EXPECT_EQ(network.warning, "network namespace's loopback could not be brought up: EACCES; "
                             "127.0.0.1 does not work in workers");
}

TEST(Protections, WithoutANamespaceTheSeccompSocketRuleStandsInAndSaysWhy) {
  SpawnSpec spec = nothing_requested();
  spec.sandbox.isolate_network = true;
  StepErrors steps = none_tried();
  steps[kStepNetUnshare] = EPERM;
  steps[kStepNetUserns] = EUSERS;
  steps[kStepNoNewPrivs] = 0;
  steps[kStepSeccomp] = 0;
  const Protection network = only(protections_from(spec, Prepared{}, steps), "network");
  EXPECT_TRUE(network.active);
  EXPECT_EQ(network.detail, "seccomp denies socket(AF_INET/AF_INET6/AF_PACKET) "
                            "(unshare(CLONE_NEWNET) failed: EPERM, "
                            "unshare(CLONE_NEWUSER|CLONE_NEWNET) failed: EUSERS)");
  EXPECT_EQ(network.warning, "network isolation off: unshare(CLONE_NEWNET) failed: EPERM, "
                             "unshare(CLONE_NEWUSER|CLONE_NEWNET) failed: EUSERS; seccomp socket "
                             "filter used instead");
}

TEST(Protections, RefusedSeccompTurnsTheFilterAndTheNetworkFallbackOff) {
  SpawnSpec spec = nothing_requested();
  spec.sandbox.isolate_network = true;
  spec.sandbox.filter_syscalls = true;
  StepErrors steps = none_tried();
  steps[kStepNetUnshare] = EPERM;
  steps[kStepNetUserns] = EPERM;
  steps[kStepNoNewPrivs] = 0;
  steps[kStepSeccomp] = EINVAL;
  const auto list = protections_from(spec, Prepared{}, steps);
  ASSERT_EQ(list.size(), 2U);
  EXPECT_EQ(list[0].name, "network");
  EXPECT_FALSE(list[0].active);
  EXPECT_EQ(list[0].detail, "off: unshare(CLONE_NEWNET) failed: EPERM, "
                            "unshare(CLONE_NEWUSER|CLONE_NEWNET) failed: EPERM; the seccomp "
                            "socket filter failed too (EINVAL)");
  EXPECT_EQ(list[0].warning, "network isolation off: unshare(CLONE_NEWNET) failed: EPERM, "
                             "unshare(CLONE_NEWUSER|CLONE_NEWNET) failed: EPERM; the seccomp "
                             "socket filter failed too (EINVAL)");
  EXPECT_EQ(list[1].name, "syscall_filter");
  EXPECT_FALSE(list[1].active);
  EXPECT_EQ(list[1].detail, "off: seccomp failed: EINVAL");
  EXPECT_EQ(list[1].warning, "syscall filter off: seccomp failed: EINVAL");
}

TEST(Protections, AFailedNoNewPrivsIsTheReasonGivenForSeccompAndLandlock) {
  SpawnSpec spec = nothing_requested();
  spec.sandbox.filter_syscalls = true;
  spec.sandbox.restrict_filesystem = true;
  StepErrors steps = none_tried();
  steps[kStepNoNewPrivs] = EPERM;
  steps[kStepSeccomp] = EINVAL; // the child reports no_new_privs' error for both
  steps[kStepLandlock] = EINVAL;
  const auto list = protections_from(spec, with_ruleset("unused"), steps);
  ASSERT_EQ(list.size(), 2U);
  EXPECT_EQ(list[0].detail, "off: seccomp failed: EPERM");
  EXPECT_EQ(list[1].name, "filesystem");
  EXPECT_FALSE(list[1].active);
  EXPECT_EQ(list[1].detail, "off: landlock_restrict_self failed: EPERM");
  EXPECT_EQ(list[1].warning, "filesystem restriction off: landlock_restrict_self failed: EPERM "
                             "(workers may write anywhere)");
}

TEST(Protections, WithoutLandlockTheFilesystemIsOffWithThePreparedReason) {
  SpawnSpec spec = nothing_requested();
  spec.sandbox.restrict_filesystem = true;
  Prepared prepared;
  prepared.restrict_filesystem = true;
  prepared.landlock_unavailable = "this kernel has no Landlock (landlock_create_ruleset: ENOSYS)";
  StepErrors steps = none_tried();
  steps[kStepNoNewPrivs] = 0;
  const Protection filesystem = only(protections_from(spec, prepared, steps), "filesystem");
  EXPECT_FALSE(filesystem.active);
  EXPECT_EQ(filesystem.detail,
            "off: this kernel has no Landlock (landlock_create_ruleset: ENOSYS)");
  EXPECT_EQ(filesystem.warning, "filesystem restriction off: this kernel has no Landlock "
                                "(landlock_create_ruleset: ENOSYS) (workers may write anywhere)");
}

TEST(Protections, AnAppliedRulesetReportsThePreparedDetail) {
  SpawnSpec spec = nothing_requested();
  spec.sandbox.restrict_filesystem = true;
  StepErrors steps = none_tried();
  steps[kStepNoNewPrivs] = 0;
  steps[kStepLandlock] = 0;
  const Protection filesystem = only(
      protections_from(spec, with_ruleset("Landlock ABI 4: writes only beneath /tmp/x"), steps),
      "filesystem");
  EXPECT_TRUE(filesystem.active);
  EXPECT_EQ(filesystem.detail, "Landlock ABI 4: writes only beneath /tmp/x");
  EXPECT_EQ(filesystem.warning, "");
}

TEST(Protections, ARootWorkerUnderAnNprocLimitHasTheProcessesProtectionOff) {
  SpawnSpec spec = nothing_requested();
  Prepared prepared;
  prepared.nproc = 100;
  prepared.nproc_detail = "RLIMIT_NPROC 100 tasks of uid 0 (40 now + 60)";
  prepared.nproc_exempt = true;
  StepErrors steps = none_tried();
  steps[kStepNproc] = 0;
  const Protection processes = only(protections_from(spec, prepared, steps), "processes");
  EXPECT_FALSE(processes.active);
  EXPECT_EQ(processes.detail, "off: RLIMIT_NPROC 100 tasks of uid 0 (40 now + 60) is set, but the "
                              "kernel does not enforce it for a process with CAP_SYS_RESOURCE or "
                              "CAP_SYS_ADMIN (the worker runs as root)");
  EXPECT_EQ(processes.warning, "process limit off: RLIMIT_NPROC 100 tasks of uid 0 (40 now + 60) "
                               "is set, but the kernel does not enforce it for a process with "
                               "CAP_SYS_RESOURCE or CAP_SYS_ADMIN (the worker runs as root)");
}

TEST(Protections, ARootWorkerInItsOwnUserNamespaceIsHeldByTheNprocLimit) {
  SpawnSpec spec = nothing_requested();
  Prepared prepared;
  prepared.nproc = 100;
  prepared.nproc_detail = "RLIMIT_NPROC 100 tasks of uid 0 (40 now + 60)";
  prepared.nproc_exempt = true;
  StepErrors steps = none_tried();
  steps[kStepNproc] = 0;
  steps[kStepNetUserns] = 0;
  const Protection processes = only(protections_from(spec, prepared, steps), "processes");
  EXPECT_TRUE(processes.active);
  EXPECT_EQ(processes.detail, "RLIMIT_NPROC 100 tasks of uid 0 (40 now + 60)");
  EXPECT_EQ(processes.warning, "");
}

TEST(Protections, AStepNeverTriedIsReportedOff) {
  SpawnSpec spec = nothing_requested();
  spec.limits.cpu_seconds = 5;
  spec.sandbox.filter_syscalls = true;
  const auto list = protections_from(spec, Prepared{}, none_tried());
  ASSERT_EQ(list.size(), 2U);
  const std::string never = std::strerror(kNotTried); // what errno_name makes of -1
  EXPECT_EQ(list[0].name, "syscall_filter");
  EXPECT_FALSE(list[0].active);
  EXPECT_EQ(list[0].detail, "off: seccomp failed: " + never);
  EXPECT_EQ(list[1].name, "cpu_time");
  EXPECT_FALSE(list[1].active);
  EXPECT_EQ(list[1].detail, "off: setrlimit failed: " + never + " (RLIMIT_CPU 5 s)");
  EXPECT_EQ(list[1].warning,
            "cpu_time limit off: setrlimit failed: " + never + " (RLIMIT_CPU 5 s)");
}

TEST(Protections, TheLimitsComeInTheirOrderWithTheirSettings) {
  SpawnSpec spec = nothing_requested();
  spec.limits.core_dumps = false;
  spec.limits.open_files = 4096;
  spec.limits.file_size_bytes = 1024;
  spec.limits.cpu_seconds = 60;
  StepErrors steps = none_tried();
  steps[kStepCore] = 0;
  steps[kStepNofile] = 0;
  steps[kStepFsize] = EPERM;
  steps[kStepCpu] = 0;
  const auto list = protections_from(spec, Prepared{}, steps);
  ASSERT_EQ(list.size(), 4U);
  EXPECT_EQ(list[0].name, "core_dumps");
  EXPECT_EQ(list[0].detail, "RLIMIT_CORE 0");
  EXPECT_EQ(list[1].name, "open_files");
  EXPECT_EQ(list[1].detail, "RLIMIT_NOFILE 4096");
  EXPECT_EQ(list[2].name, "file_size");
  EXPECT_FALSE(list[2].active);
  EXPECT_EQ(list[2].detail, "off: setrlimit failed: EPERM (RLIMIT_FSIZE 1024 bytes)");
  EXPECT_EQ(list[2].warning, "file_size limit off: setrlimit failed: EPERM (RLIMIT_FSIZE 1024 "
                             "bytes)");
  EXPECT_EQ(list[3].name, "cpu_time");
  EXPECT_TRUE(list[3].active);
  EXPECT_EQ(list[3].detail, "RLIMIT_CPU 60 s");
  EXPECT_EQ(list[3].warning, "");
}

TEST(Protections, ProtectionsAPersonTurnedOffAreReportedOffWithTheReason) {
  SpawnSpec spec = nothing_requested();
  spec.sandbox.filter_syscalls = true;
  spec.sandbox.disabled_reason = "KBENCH_SANDBOX=off:network,filesystem";
  StepErrors steps = none_tried();
  steps[kStepNoNewPrivs] = 0;
  steps[kStepSeccomp] = 0;
  const auto list = protections_from(spec, Prepared{}, steps);
  ASSERT_EQ(list.size(), 3U);
  EXPECT_EQ(list[0].name, "network");
  EXPECT_FALSE(list[0].active);
  EXPECT_EQ(list[0].detail, "off: KBENCH_SANDBOX=off:network,filesystem");
  EXPECT_EQ(list[0].warning, "network protection off: KBENCH_SANDBOX=off:network,filesystem");
  EXPECT_EQ(list[1].name, "filesystem");
  EXPECT_EQ(list[1].warning, "filesystem protection off: KBENCH_SANDBOX=off:network,filesystem");
  EXPECT_EQ(list[2].name, "syscall_filter");
  EXPECT_TRUE(list[2].active);
  EXPECT_EQ(list[2].detail, "seccomp (EPERM): ptrace, process_vm_readv, process_vm_writev, "
                            "personality changes, setns, kexec, bpf, perf_event_open, "
                            "userfaultfd, io_uring_setup");
}

TEST(Protections, RanksThatTalkOverLoopbackHaveTheNetworkOffAndSaySo) {
  SpawnSpec spec = nothing_requested();
  spec.sandbox.isolate_network = true;
  spec.sandbox.allow_loopback_network = true;
  const Protection network = only(protections_from(spec, Prepared{}, none_tried()), "network");
  EXPECT_FALSE(network.active);
  EXPECT_EQ(network.detail, "off: ranks of a collective evaluation talk over loopback");
  EXPECT_EQ(network.warning,
            "network isolation off: ranks of a collective evaluation talk over loopback");
}
