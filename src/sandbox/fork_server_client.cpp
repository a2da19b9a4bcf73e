// kbench's side of the fork server (fork_server.hpp): one server per key, started lazily, and
// the job request that turns a SpawnSpec into a forked Process.
#include "sandbox/fork_job.hpp"
#include "sandbox/fork_server.hpp"
#include "sandbox/spawn_steps.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <poll.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kbench::sandbox {
namespace {

// The server imports torch: minutes under a loaded machine are not a hang.
constexpr auto kReadyTimeout = std::chrono::seconds(180);
constexpr auto kReplyTimeout = std::chrono::seconds(60);

struct Server {
  std::mutex mutex; // one job at a time on the socket
  std::optional<Process> process;
  UniqueFd control;
  std::string unusable; // why jobs spawn instead (set once; reported once)
  bool reported = false;
};

std::mutex g_servers_mutex;
std::map<std::string, std::shared_ptr<Server>>& servers() {
  // Never destroyed: at exit the kernel closes the socket and each server leaves on its EOF.
  static auto* map = new std::map<std::string, std::shared_ptr<Server>>();
  return *map;
}

bool is_per_job(const std::string& entry) {
  const auto name = entry.substr(0, entry.find('='));
  const auto& names = per_job_variables();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> server_environment(const SpawnSpec& spec) {
  std::vector<std::string> out;
  std::copy_if(spec.environment.begin(), spec.environment.end(), std::back_inserter(out),
               [](const std::string& e) { return !is_per_job(e); });
  std::sort(out.begin(), out.end());
  return out;
}

std::string key_of(const SpawnSpec& spec) {
  std::string key;
  for (const auto& part : spec.argv) {
    key += part + '\0';
  }
  key += '\n';
  for (const auto& entry : server_environment(spec)) {
    key += entry + '\0';
  }
  return key;
}

// Reads the server's first line on its response fd: {"ready": true} once torch and the worker
// modules are imported, or why not. Drains its stderr meanwhile, for the reason.
std::string await_ready(Process& server) {
  const auto until = std::chrono::steady_clock::now() + kReadyTimeout;
  std::string line, errors;
  std::array<char, 4096> buffer{};
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      return fmt::format("it did not say it was ready within {} s", kReadyTimeout.count());
    }
    std::array<pollfd, 2> fds{pollfd{server.response_fd(), POLLIN, 0},
                              pollfd{server.stderr_fd(), POLLIN, 0}};
    if (poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left, 1000))) < 0 &&
        errno != EINTR) {
      return std::string("poll failed: ") + std::strerror(errno);
    }
    if (fds[1].fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
      const ssize_t n = read(fds[1].fd, buffer.data(), buffer.size());
      if (n > 0 && errors.size() < 16384) {
        errors.append(buffer.data(), static_cast<std::size_t>(n));
      } else if (n <= 0) {
        server.close_stderr_fd();
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      const ssize_t n = read(fds[0].fd, buffer.data(), buffer.size());
      if (n <= 0) {
        const auto status = server.wait();
        return fmt::format("it {}{}{}", status.describe(), errors.empty() ? "" : ": ", errors);
      }
      line.append(buffer.data(), static_cast<std::size_t>(n));
    }
  }
  const auto ready = nlohmann::json::parse(line.substr(0, line.find('\n')), nullptr, false);
  if (!ready.is_object() || !ready.value("ready", false)) {
    return fmt::format("it refused: {}", ready.is_object() ? ready.value("error", line) : line);
  }
  return {};
}

void start_server(Server& server, const SpawnSpec& job) {
  static std::once_flag subreaper;
  std::call_once(subreaper, [] {
    // The server's children are handed to kbench when their parent (the server's
    // intermediate) exits; before the server is forked, so that it inherits the setting.
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) == 0) {
      Process::note_subreaper();
    }
  });
  int is_subreaper = 0;
  if (prctl(PR_GET_CHILD_SUBREAPER, &is_subreaper) != 0 || !is_subreaper) {
    server.unusable = "kbench cannot be its workers' subreaper (prctl PR_SET_CHILD_SUBREAPER)";
    return;
  }
  std::array<int, 2> pair{};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair.data()) != 0) {
    server.unusable = std::string("socketpair failed: ") + std::strerror(errno);
    return;
  }
  UniqueFd ours(pair[0]), theirs(pair[1]);
  SpawnSpec spec;
  spec.argv = job.argv;
  spec.argv.push_back(kForkServerFlag);
  spec.environment = server_environment(job);
  spec.working_directory = "/";
  spec.stdin_fd = theirs.get();
  try {
    server.process = Process::spawn(spec);
  } catch (const SpawnError& error) {
    server.unusable = error.what();
    return;
  }
  theirs.reset();
  if (auto why = await_ready(*server.process); !why.empty()) {
    server.unusable = why;
    server.process.reset(); // kills it
    return;
  }
  // Nothing more is read from it: its later output (there should be none) meets EPIPE.
  server.process->close_stdout_fd();
  server.process->close_stderr_fd();
  server.process->close_response_fd();
  server.control = std::move(ours);
}

struct Pipe {
  UniqueFd read, write;
};
Pipe make_pipe() {
  std::array<int, 2> fds{};
  if (pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw SpawnError(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Sends the job and waits for the child's pid. Empty with `why` when the server is unusable.
std::optional<pid_t> request_fork(Server& server, const nlohmann::json& job,
                                  const std::vector<int>& fds, std::string& why) {
  const std::string text = job.dump();
  if (text.size() > kMaxJobBytes) {
    why = "the job is too large for the fork server";
    return std::nullopt;
  }
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  iovec io{const_cast<char*>(text.data()), text.size()};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  cmsghdr* c = CMSG_FIRSTHDR(&message);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  ssize_t sent = -1;
  do {
    sent = sendmsg(server.control.get(), &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != static_cast<ssize_t>(text.size())) {
    why = std::string("the fork server is gone (send: ") + std::strerror(errno) + ")";
    return std::nullopt;
  }
  pollfd p{server.control.get(), POLLIN, 0};
  int ready = 0;
  do {
    ready = poll(&p, 1, static_cast<int>(kReplyTimeout.count() * 1000));
  } while (ready < 0 && errno == EINTR);
  std::array<char, 4096> buffer{};
  const ssize_t got = ready > 0 ? recv(server.control.get(), buffer.data(), buffer.size(), 0) : -1;
  if (got <= 0) {
    why = ready == 0 ? "the fork server did not answer a job" : "the fork server is gone";
    return std::nullopt;
  }
  const auto reply = nlohmann::json::parse(buffer.data(), buffer.data() + got, nullptr, false);
  if (!reply.is_object() || !reply.contains("pid") || !reply["pid"].is_number_integer()) {
    why = "the fork server could not fork: " +
          (reply.is_object() ? reply.value("error", std::string("no pid")) : "bad reply");
    return std::nullopt;
  }
  return reply["pid"].get<pid_t>();
}

} // namespace

bool fork_server_wanted() {
  const char* value = std::getenv(kForkServerVariable);
  const std::string setting = value ? value : "";
  if (setting.empty() || setting == "on") {
    return true;
  }
  if (setting == "off") {
    return false;
  }
  throw std::runtime_error(fmt::format(
      "{}={}: use on (the default: workers are forked by a warm server) or off (each worker is "
      "spawned and imports torch itself)",
      kForkServerVariable, setting));
}

const std::vector<std::string>& per_job_variables() {
  static const std::vector<std::string> names = {
      "TMPDIR", "HOME", "USER", "LOGNAME", "CUDA_VISIBLE_DEVICES", "TORCH_CUDA_ARCH_LIST",
      "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR",
      // offered to the compile and candidate workers
      // only: read by kbench's build wrappers
      "KBENCH_PCH_DIR", "KBENCH_HOST_PCH_DIR", "KBENCH_ATEN_SUBSET_DIR"};
  return names;
}

ForkAttempt start_forked(const SpawnSpec& spec) {
  ForkAttempt attempt;
  std::shared_ptr<Server> server;
  {
    std::lock_guard lock(g_servers_mutex);
    auto& slot = servers()[key_of(spec)];
    if (!slot) {
      slot = std::make_shared<Server>();
    }
    server = slot;
  }
  std::lock_guard lock(server->mutex);
  auto unusable = [&] {
    if (!server->reported) {
      server->reported = true;
      attempt.warning = fmt::format("the fork server could not be used ({}); workers were spawned "
                                    "instead, each importing torch itself",
                                    server->unusable);
      std::cerr << "kbench: " << attempt.warning << "\n";
    }
    return std::move(attempt);
  };
  if (server->unusable.empty() && !server->control.valid()) {
    start_server(*server, spec);
  }
  if (!server->unusable.empty()) {
    return unusable();
  }
  const Prepared prepared = prepare(spec);
  std::array<Pipe, 5> pipes{make_pipe(), make_pipe(), make_pipe(), make_pipe(), make_pipe()};
  std::vector<int> fds = {pipes[0].read.get(), pipes[1].write.get(), pipes[2].write.get(),
                          pipes[3].write.get(), pipes[4].write.get()};
  if (prepared.landlock_fd.valid()) {
    fds.push_back(prepared.landlock_fd.get());
  }
  std::string why;
  const auto pid = request_fork(*server, encode_job(spec, prepared), fds, why);
  // The child's ends go now (they travelled): EOF reaches kbench when the child exits.
  for (auto& p : pipes) {
    (&p == &pipes[0] ? p.read : p.write).reset();
  }
  if (!pid) {
    server->unusable = why;
    server->control.reset();
    server->process.reset();
    return unusable();
  }
  attempt.process = Process::adopt_forked(*pid,
                                          {std::move(pipes[0].write), std::move(pipes[1].read),
                                           std::move(pipes[2].read), std::move(pipes[3].read)},
                                          std::move(pipes[4].read), spec, prepared);
  return attempt;
}

} // namespace kbench::sandbox
