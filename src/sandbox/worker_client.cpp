#include "sandbox/worker_client.hpp"

#include "sandbox/fork_server.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <poll.h>
#include <signal.h>
#include <thread>
#include <unistd.h>

namespace kbench::sandbox {
namespace {

// A response longer than this is not a protocol answer any more.
constexpr std::size_t kMaxResponseBytes = 64u << 20;

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

} // namespace

namespace {

TransferPolicy transfer_policy(const SpawnSpec& spec) {
  TransferPolicy policy;
  policy.roots = spec.transfer_roots;
  if (spec.sandbox.user) {
    policy.uid = spec.sandbox.user->uid;
    policy.gid = spec.sandbox.user->gid;
  }
  return policy;
}

Process start(const SpawnSpec& spec, bool fork, std::string& warning) {
  if (fork && fork_server_wanted()) {
    auto attempt = start_forked(spec);
    warning = attempt.warning;
    if (attempt.process) {
      return std::move(*attempt.process);
    }
  }
  return Process::spawn(spec);
}

} // namespace

WorkerClient::WorkerClient(const SpawnSpec& spec, std::size_t output_keep_bytes, bool fork)
    : m_process(start(spec, fork, m_start_warning)), m_stdout(output_keep_bytes),
      m_stderr(output_keep_bytes), m_transfers(transfer_policy(spec)) {}

WorkerClient::~WorkerClient() {
  m_process.kill_group();
  m_process.wait();
}

void WorkerClient::kill_from_other_thread() {
  if (m_process.pid() > 0) {
    ::kill(-m_process.pid(), SIGKILL);
  }
}

bool WorkerClient::alive() {
  return !m_process.try_wait().has_value();
}

WorkerReply WorkerClient::request(const nlohmann::json& request, std::chrono::milliseconds deadline,
                                  const InterimHandler& on_interim) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  m_deadline_pause = {};
  const double sent_at = m_process.lifetime_s();
  if (m_process.request_fd() < 0 || !write_all(m_process.request_fd(), request.dump() + "\n")) {
    // The worker is gone (EPIPE): collect how it ended.
    return reply_after_death();
  }
  auto reply = await_reply(until, on_interim);
  const auto op_field = request.find("op");
  const std::string op =
      op_field != request.end() && op_field->is_string() ? op_field->get<std::string>() : "";
  auto entry = std::find_if(m_request_times.begin(), m_request_times.end(),
                            [&](const RequestTime& t) { return t.op == op; });
  if (entry == m_request_times.end()) {
    entry = m_request_times.insert(m_request_times.end(), RequestTime{op, 0, sent_at, 0});
  }
  entry->count += 1;
  entry->seconds += m_process.lifetime_s() - sent_at;
  return reply;
}

WorkerReply WorkerClient::await_reply(std::chrono::steady_clock::time_point deadline,
                                      const InterimHandler& on_interim) {
  std::array<char, 65536> buffer{};
  for (;;) {
    if (const auto newline = m_pending.find('\n'); newline != std::string::npos) {
      std::string line = m_pending.substr(0, newline);
      m_pending.erase(0, newline + 1);
      WorkerReply reply;
      try {
        reply.body = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception& error) {
        reply.detail = std::string("worker answered a line that is not JSON: ") + error.what();
        return reply;
      }
      if (!reply.body.is_object()) {
        reply.detail = "worker answered JSON that is not an object";
        return reply;
      }
      if (const auto interim = reply.body.find("interim");
          interim != reply.body.end() && interim->is_boolean() && interim->get<bool>()) {
        if (const auto* transfer = transfer_request(reply.body)) {
          if (m_process.request_fd() < 0 ||
              !write_all(m_process.request_fd(), m_transfers.answer(*transfer).dump() + "\n")) {
            return reply_after_death();
          }
          continue;
        }
        if (!on_interim) {
          reply.detail = "worker sent an interim message to a request that takes none";
          return reply;
        }
        if (const auto answer = on_interim(reply.body)) {
          if (m_process.request_fd() < 0 ||
              !write_all(m_process.request_fd(), answer->dump() + "\n")) {
            return reply_after_death();
          }
        }
        continue;
      }
      reply.kind = WorkerReply::Kind::answered;
      return reply;
    }
    if (m_pending.size() > kMaxResponseBytes) {
      WorkerReply reply;
      reply.detail = "worker response exceeded " + std::to_string(kMaxResponseBytes) + " bytes";
      return reply;
    }
    if (m_process.response_fd() < 0) {
      return reply_after_death();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline + m_deadline_pause) {
      m_process.kill_group();
      WorkerReply reply;
      reply.kind = WorkerReply::Kind::timed_out;
      reply.exit = m_process.wait();
      return reply;
    }
    const auto wait_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline + m_deadline_pause - now)
            .count();
    std::array<pollfd, 3> fds{pollfd{m_process.response_fd(), POLLIN, 0},
                              pollfd{m_process.stdout_fd(), POLLIN, 0},
                              pollfd{m_process.stderr_fd(), POLLIN, 0}};
    const int ready =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(wait_ms + 1, 1000)));
    if (ready < 0 && errno != EINTR) {
      m_process.kill_group();
      WorkerReply reply;
      reply.detail = "poll on worker pipes failed";
      reply.exit = m_process.wait();
      return reply;
    }
    // Drain stdout/stderr first so a chatty worker can never block on a full pipe.
    auto drain = [&](std::size_t index, OutputCapture& capture, void (Process::*close)()) {
      if (fds[index].fd < 0 || !(fds[index].revents & (POLLIN | POLLHUP | POLLERR))) {
        return;
      }
      const ssize_t n = ::read(fds[index].fd, buffer.data(), buffer.size());
      if (n > 0) {
        capture.append(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        (m_process.*close)();
      }
    };
    drain(1, m_stdout, &Process::close_stdout_fd);
    drain(2, m_stderr, &Process::close_stderr_fd);
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t n = ::read(fds[0].fd, buffer.data(), buffer.size());
      if (n > 0) {
        m_pending.append(buffer.data(), static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        m_process.close_response_fd();
      }
    }
  }
}

WorkerReply WorkerClient::reply_after_death() {
  // The response channel closed: the worker is exiting or dead. Give it a moment to finish
  // writing its last words to stderr (a traceback, a CUDA error), then reap it.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::array<char, 65536> buffer{};
  while (std::chrono::steady_clock::now() < until && !m_process.try_wait()) {
    std::array<pollfd, 2> fds{pollfd{m_process.stdout_fd(), POLLIN, 0},
                              pollfd{m_process.stderr_fd(), POLLIN, 0}};
    if (::poll(fds.data(), fds.size(), 50) > 0) {
      for (std::size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP))) {
          const ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
          if (n > 0) {
            (i == 0 ? m_stdout : m_stderr)
                .append(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
          } else {
            i == 0 ? m_process.close_stdout_fd() : m_process.close_stderr_fd();
          }
        }
      }
    }
  }
  m_process.kill_group();
  WorkerReply reply;
  reply.kind = WorkerReply::Kind::died;
  reply.exit = m_process.wait();
  // Whatever is still buffered in the pipes belongs to the story too.
  for (int fd : {m_process.stdout_fd(), m_process.stderr_fd()}) {
    if (fd < 0) {
      continue;
    }
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n <= 0) {
        break;
      }
      (fd == m_process.stdout_fd() ? m_stdout : m_stderr)
          .append(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    }
  }
  return reply;
}

void WorkerClient::shutdown(std::chrono::milliseconds grace) {
  if (m_process.reaped()) {
    return;
  }
  if (m_process.request_fd() >= 0) {
    write_all(m_process.request_fd(), "{\"op\":\"exit\"}\n");
    m_process.close_request_fd();
  }
  const auto until = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < until) {
    if (m_process.try_wait()) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  m_process.kill_group();
  m_process.wait();
}

} // namespace kbench::sandbox
