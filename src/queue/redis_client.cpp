#include "queue/redis_client.hpp"

#include <fmt/format.h>

#include <csignal>
#include <hiredis/hiredis.h>
#include <regex>
#include <thread>

namespace kbench::queue {
namespace {

Reply convert(const redisReply* r) {
  Reply out;
  if (r == nullptr) {
    return out;
  }
  switch (r->type) {
  case REDIS_REPLY_STRING:
    out.kind = Reply::Kind::string;
    out.text.assign(r->str, r->len);
    break;
  case REDIS_REPLY_STATUS:
    out.kind = Reply::Kind::status;
    out.text.assign(r->str, r->len);
    break;
  case REDIS_REPLY_ERROR:
    out.kind = Reply::Kind::error;
    out.text.assign(r->str, r->len);
    break;
  case REDIS_REPLY_INTEGER:
    out.kind = Reply::Kind::integer;
    out.integer = r->integer;
    break;
  case REDIS_REPLY_ARRAY:
    out.kind = Reply::Kind::array;
    for (std::size_t i = 0; i < r->elements; ++i) {
      out.elements.push_back(convert(r->element[i]));
    }
    break;
  default:
    break;
  }
  return out;
}

} // namespace

std::string QueueAddress::text() const {
  return fmt::format("redis://{}:{}/{}", host, port, stream);
}

QueueAddress parse_queue_url(const std::string& url) {
  static const std::regex form(R"(redis://([^:/]+)(?::(\d+))?(?:/([A-Za-z0-9_.:-]+))?/?)");
  std::smatch match;
  if (!std::regex_match(url, match, form)) {
    throw std::invalid_argument(fmt::format(
        "--queue {:?}: expected redis://HOST[:PORT][/STREAM] (a stream name of letters, digits, "
        "'_', '.', ':' and '-')",
        url));
  }
  QueueAddress address;
  address.host = match[1];
  if (match[2].matched) {
    address.port = std::stoi(match[2]);
    if (address.port < 1 || address.port > 65535) {
      throw std::invalid_argument(fmt::format("--queue {:?}: the port must be 1-65535", url));
    }
  }
  if (match[3].matched) {
    address.stream = match[3];
  }
  return address;
}

const Reply& Reply::at(std::size_t i) const {
  if (i >= elements.size()) {
    throw RedisError(
        fmt::format("a Redis reply has {} element(s), not {}", elements.size(), i + 1));
  }
  return elements[i];
}

RedisClient::RedisClient(QueueAddress address, double give_up_s)
    : m_address(std::move(address)), m_give_up_s(give_up_s) {
  // hiredis writes with write(2): on a connection the server closed (a Redis restart) that
  // raises SIGPIPE, whose default action would kill the worker instead of letting the command
  // fail and reconnect.
  std::signal(SIGPIPE, SIG_IGN);
}

RedisClient::~RedisClient() {
  if (m_context != nullptr) {
    redisFree(m_context);
  }
}

void RedisClient::connect() {
  if (m_context != nullptr) {
    redisFree(m_context);
    m_context = nullptr;
  }
  const timeval timeout{5, 0};
  m_context = redisConnectWithTimeout(m_address.host.c_str(), m_address.port, timeout);
  if (m_context != nullptr && m_context->err == 0) {
    redisSetTimeout(m_context, timeval{60, 0}); // a blocking read waits at most a few seconds
  }
}

Reply RedisClient::command(const std::vector<std::string>& argv) {
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
  for (const auto& arg : argv) {
    pointers.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  const auto start = std::chrono::steady_clock::now();
  double wait_s = 0.1;
  std::string last_error;
  for (;;) {
    if (m_context == nullptr || m_context->err != 0) {
      if (m_context != nullptr) {
        ++m_reconnects;
      }
      connect();
    }
    if (m_context != nullptr && m_context->err == 0) {
      auto* raw = static_cast<redisReply*>(redisCommandArgv(
          m_context, static_cast<int>(argv.size()), pointers.data(), lengths.data()));
      if (raw != nullptr) {
        Reply reply = convert(raw);
        freeReplyObject(raw);
        if (reply.kind == Reply::Kind::error) {
          throw RedisError(fmt::format("{} ({}): {}", argv.empty() ? "" : argv[0], m_address.text(),
                                       reply.text));
        }
        return reply;
      }
    }
    last_error = m_context == nullptr ? "no memory for a connection" : m_context->errstr;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > m_give_up_s) {
      throw RedisError(
          fmt::format("{}: unreachable for {:.0f} s ({})", m_address.text(), waited, last_error));
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
    wait_s = std::min(5.0, wait_s * 2);
    if (m_context != nullptr) {
      m_context->err = REDIS_ERR_IO; // force a new connection on the next pass
    }
  }
}

} // namespace kbench::queue
