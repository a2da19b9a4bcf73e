#include "worker/protocol_loop.hpp"

#include <nlohmann/json.hpp>
#include <pybind11/embed.h>

#include <cerrno>
#include <string>
#include <unistd.h>

namespace py = pybind11;

namespace kbench::worker {
namespace {

// The request channel: stdin in, the response fd out. One per process, shared by `serve` and by
// `receive_interim`, which reads the orchestrator's interim answers through the same buffer.
struct Channel {
  std::string buffer; // bytes read from stdin, not yet consumed as lines
  int response_fd = -1;
};
Channel g_channel;

bool read_line(std::string& buffer, std::string& line) {
  char chunk[65536];
  for (;;) {
    if (const auto newline = buffer.find('\n'); newline != std::string::npos) {
      line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      return true;
    }
    const ssize_t n = ::read(0, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

bool write_line(int fd, std::string text) {
  text.push_back('\n');
  std::string_view rest(text);
  while (!rest.empty()) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string error_answer(const std::string& message) {
  return nlohmann::json{{"ok", false}, {"status", "harness_error"}, {"message", message}}.dump();
}

} // namespace

bool send_interim(const std::string& message) {
  return g_channel.response_fd >= 0 && write_line(g_channel.response_fd, message);
}

std::optional<std::string> receive_interim() {
  std::string line;
  if (g_channel.response_fd < 0 || !read_line(g_channel.buffer, line)) {
    return std::nullopt;
  }
  return line;
}

int serve(int response_fd) {
  py::object handle_line = py::module_::import("kbench.worker.handlers").attr("handle_line");
  g_channel.response_fd = response_fd;
  std::string& buffer = g_channel.buffer;
  std::string line;
  while (read_line(buffer, line)) {
    nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    if (request.is_discarded() || !request.is_object()) {
      write_line(response_fd, error_answer("request is not a JSON object"));
      continue;
    }
    if (request.value("op", "") == "exit") {
      return 0;
    }
    std::string answer;
    try {
      answer = handle_line(line).cast<std::string>();
    } catch (const py::error_already_set& error) {
      answer = error_answer(std::string("worker error: ") + error.what());
    }
    if (!write_line(response_fd, answer)) {
      return 2; // the orchestrator is gone
    }
    const auto parsed = nlohmann::json::parse(answer, nullptr, false);
    if (parsed.is_object() && parsed.value("fatal", false)) {
      return 3;
    }
  }
  return 0;
}

} // namespace kbench::worker
