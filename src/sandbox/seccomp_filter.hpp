#pragma once
// The seccomp program a sandboxed worker runs under, built in the parent (the child may not
// allocate) as classic BPF over `seccomp_data`. A denied call fails with EPERM rather than
// killing the worker, so that a candidate that probes gets an error it can report.
#include <linux/filter.h>
#include <vector>

namespace kbench::sandbox {

// The syscalls the deny-list refuses (personality changes are handled apart: querying stays).
const std::vector<int>& denied_syscalls();

// `deny_list`: the list above and personality changes. `deny_inet_sockets`: socket(AF_INET /
// AF_INET6 / AF_PACKET), the stand-in for a network namespace that could not be made. Either
// way another ABI (i386, x32) is denied outright.
std::vector<sock_filter> build_filter(bool deny_list, bool deny_inet_sockets);

} // namespace kbench::sandbox
