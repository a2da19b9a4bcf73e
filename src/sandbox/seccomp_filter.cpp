#include "sandbox/seccomp_filter.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/syscall.h>

namespace kbench::sandbox {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "the seccomp filter knows x86_64 and aarch64 only"
#endif

constexpr std::uint32_t kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);

sock_filter stmt(std::uint16_t code, std::uint32_t k) {
  return BPF_STMT(code, k);
}
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  return BPF_JUMP(code, k, jt, jf);
}

} // namespace

// Denied with EPERM, each for a reason:
const std::vector<int>& denied_syscalls() {
  static const std::vector<int> list = {
      SYS_ptrace,            // reading or steering another process (the orchestrator's other
      SYS_process_vm_readv,  // workers run as the same user)
      SYS_process_vm_writev, //
      SYS_setns,             // a root worker could re-enter the host's network namespace
      SYS_kexec_load,        // replacing the kernel (root in a container)
#ifdef SYS_kexec_file_load
      SYS_kexec_file_load,
#endif
      SYS_bpf,             // kernel attack surface, and tracing of other processes
      SYS_perf_event_open, // counters and samples of other processes (timing side channels)
      SYS_userfaultfd,     // a classic kernel-exploit primitive
      SYS_io_uring_setup,  // io_uring runs socket()/connect() where seccomp does not see them
  };
  return list;
}

std::vector<sock_filter> build_filter(bool deny_list, bool deny_inet_sockets) {
  constexpr std::uint32_t arch_offset = offsetof(seccomp_data, arch);
  constexpr std::uint32_t nr_offset = offsetof(seccomp_data, nr);
  constexpr std::uint32_t arg0_offset = offsetof(seccomp_data, args); // low half (little endian)
  std::vector<sock_filter> f;
  f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arch_offset));
  f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
  f.push_back(stmt(BPF_RET | BPF_K, kDeny)); // another ABI (i386 through int 0x80)
  f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, nr_offset));
#if defined(__x86_64__)
  f.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1)); // the x32 ABI
  f.push_back(stmt(BPF_RET | BPF_K, kDeny));
#endif
  if (deny_list) {
    for (const int nr : denied_syscalls()) {
      f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1));
      f.push_back(stmt(BPF_RET | BPF_K, kDeny));
    }
    // personality(): querying (0xffffffff) and PER_LINUX (0) stay allowed; switching to
    // another execution domain or turning address-space randomisation off is denied.
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_personality, 0, 5));
    f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffU, 2, 0));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
    f.push_back(stmt(BPF_RET | BPF_K, kDeny));
    f.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  if (deny_inet_sockets) {
    if (!deny_list) { // io_uring would create sockets behind the filter's back
      f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1));
      f.push_back(stmt(BPF_RET | BPF_K, kDeny));
    }
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 6));
    f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, AF_PACKET, 0, 1));
    f.push_back(stmt(BPF_RET | BPF_K, kDeny));
    f.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  f.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return f;
}

} // namespace kbench::sandbox
