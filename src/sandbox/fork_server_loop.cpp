// The fork server's loop (kbench-worker --fork-server): one job per control message. It runs
// only kbench's code; candidate and problem code runs in the children, each set up by
// setup_child as a spawned worker is.
#include "sandbox/fork_job.hpp"
#include "sandbox/fork_server.hpp"
#include "sandbox/spawn_steps.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace kbench::sandbox {
namespace {

void send_reply(int control_fd, const nlohmann::json& reply) {
  const std::string text = reply.dump();
  [[maybe_unused]] auto sent = send(control_fd, text.data(), text.size(), MSG_NOSIGNAL);
}

// The child, two forks below the server: waits until its parent (the intermediate) has exited
// and kbench adopted it, applies every layer, takes over the launch environment and serves.
[[noreturn]] void run_child(const SpawnSpec& spec, const Prepared& prepared,
                            const std::array<int, kJobFds>& fds, int adopted_fd, pid_t kbench,
                            const ForkHooks& hooks) {
  const pid_t middle = getppid();
  char byte = 0;
  while (read(adopted_fd, &byte, 1) < 0 && errno == EINTR) {
  }
  // The pipe closes as the intermediate exits, a moment before its children are handed over.
  for (int i = 0; getppid() == middle && i < 100000; ++i) {
    usleep(50);
  }
  if (getppid() != kbench) {
    _exit(127); // kbench is gone
  }
  const int report_fd = setup_child(
      spec, prepared, {fds[kJobStdin], fds[kJobStdout], fds[kJobStderr], fds[kJobResponse]},
      fds[kJobErrors]);
  // As exec would: dumpable again (the server is not, so that no worker of its user can read
  // or write its memory), which CUDA needs for its /proc/self files.
  prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  if (getppid() != kbench) {
    report_fatal(report_fd, kFatalForked, ESRCH);
    _exit(127);
  }
  hooks.after_fork_child();
  if (const std::string error = hooks.take_environment(spec.environment); !error.empty()) {
    const std::string line = "kbench-worker: " + error + "\n";
    [[maybe_unused]] auto written = write(2, line.data(), line.size());
    report_fatal(report_fd, kFatalForked, EINVAL);
    _exit(127);
  }
  close(report_fd); // what a successful exec does: kbench stops reading setup records
  _exit(hooks.run_job());
}

// Forks the job's child through an intermediate that exits at once, so that the child becomes
// kbench's (its subreaper). Returns the child's pid, or -errno.
pid_t fork_job(const SpawnSpec& spec, const Prepared& prepared, const std::array<int, kJobFds>& fds,
               pid_t kbench, const ForkHooks& hooks) {
  std::array<int, 2> pid_pipe{}, adopted{};
  if (pipe2(pid_pipe.data(), O_CLOEXEC) != 0) {
    return -errno;
  }
  if (pipe2(adopted.data(), O_CLOEXEC) != 0) {
    const int saved = errno;
    close(pid_pipe[0]);
    close(pid_pipe[1]);
    return -saved;
  }
  hooks.before_fork();
  const pid_t middle = fork();
  if (middle == 0) {
    close(pid_pipe[0]);
    const pid_t child = fork();
    if (child == 0) {
      close(pid_pipe[1]);
      close(adopted[1]);
      run_child(spec, prepared, fds, adopted[0], kbench, hooks);
    }
    pid_t answer = child < 0 ? -errno : child;
    if (child > 0) {
      setpgid(child, child); // before kbench learns the pid: its group kill cannot miss it
    }
    [[maybe_unused]] auto written = write(pid_pipe[1], &answer, sizeof answer);
    _exit(0);
  }
  const int fork_error = middle < 0 ? errno : 0;
  hooks.after_fork_parent();
  close(pid_pipe[1]);
  close(adopted[0]);
  close(adopted[1]);
  if (middle < 0) {
    close(pid_pipe[0]);
    return -fork_error;
  }
  int status = 0;
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  pid_t child = -EIO;
  while (read(pid_pipe[0], &child, sizeof child) < 0 && errno == EINTR) {
  }
  close(pid_pipe[0]);
  return child;
}

} // namespace

int serve_fork_requests(int control_fd, const ForkHooks& hooks) {
  const pid_t kbench = getppid();
  // No worker of this user reads or writes the server's memory (/proc/<pid>/mem, ptrace).
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // Its life is kbench's control socket, not the thread that started it.
  prctl(PR_SET_PDEATHSIG, 0);
  std::vector<char> buffer(kMaxJobBytes);
  for (;;) {
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * kJobFds)> control{};
    iovec io{buffer.data(), buffer.size()};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    const ssize_t got = recvmsg(control_fd, &message, MSG_CMSG_CLOEXEC);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return 0; // kbench closed its end: it is done or gone
    }
    std::vector<int> received;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        const auto count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const int* data = reinterpret_cast<const int*>(CMSG_DATA(c));
        received.insert(received.end(), data, data + count);
      }
    }
    // Above the child's 0..3 slots, as the spawn's pipes are (kHighFd).
    for (int& fd : received) {
      const int high = fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
      close(fd);
      fd = high;
    }
    auto close_received = [&] {
      for (int fd : received) {
        if (fd >= 0) {
          close(fd);
        }
      }
    };
    SpawnSpec spec;
    Prepared prepared;
    std::array<int, kJobFds> fds{};
    fds.fill(-1);
    try {
      const auto job = nlohmann::json::parse(buffer.data(), buffer.data() + got);
      decode_job(job, spec, prepared);
      const bool landlock = job.value("landlock_fd", false);
      if (received.size() != static_cast<std::size_t>(kJobLandlock + (landlock ? 1 : 0)) ||
          std::find(received.begin(), received.end(), -1) != received.end()) {
        throw std::runtime_error("the job came with " + std::to_string(received.size()) +
                                 " descriptors");
      }
      std::copy(received.begin(), received.end(), fds.begin());
      if (landlock) {
        prepared.landlock_fd = UniqueFd(fds[kJobLandlock]); // closed with `prepared`
        received.pop_back();
      }
    } catch (const std::exception& error) {
      close_received();
      send_reply(control_fd, {{"error", std::string("malformed job: ") + error.what()}});
      continue;
    }
    const pid_t child = fork_job(spec, prepared, fds, kbench, hooks);
    // The child holds its ends now; kbench must see EOF when it exits, so none stays here.
    close_received();
    if (child < 0) {
      send_reply(control_fd, {{"error", std::string("fork failed: ") + std::strerror(-child)}});
    } else {
      send_reply(control_fd, {{"pid", child}});
    }
  }
}

} // namespace kbench::sandbox
