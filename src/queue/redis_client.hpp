#pragma once
// One connection to a Redis server over hiredis (the distribution's libhiredis-dev), for the
// work queue (queue/work_queue.hpp). A command that meets a broken or refused connection is
// sent again on a new one, with backoff (0.1 s doubling to 5 s), until `give_up_s` has passed:
// a restarted Redis server costs a pause, not a job. An error reply (WRONGTYPE, NOGROUP, ...) is
// not retried: it is thrown as RedisError.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct redisContext;

namespace kbench::queue {

// redis://HOST[:PORT][/STREAM]: where the queue lives and the name of its stream.
struct QueueAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string stream = "kbench";
  std::string text() const; // back as a URL
};
// Throws std::invalid_argument naming what is wrong with `url`.
QueueAddress parse_queue_url(const std::string& url);

struct RedisError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A reply, as a tree: strings (status, bulk, error text), integers, arrays, nil.
struct Reply {
  enum class Kind { nil, string, integer, array, status, error } kind = Kind::nil;
  std::string text;
  long long integer = 0;
  std::vector<Reply> elements;
  bool is_nil() const { return kind == Kind::nil; }
  const Reply& at(std::size_t i) const; // throws RedisError when out of range
};

class RedisClient {
public:
  explicit RedisClient(QueueAddress address, double give_up_s = 300);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Sends `argv` (binary-safe) and answers the reply; reconnects as described above. Throws
  // RedisError for an error reply, or when the server stayed unreachable past give_up_s.
  Reply command(const std::vector<std::string>& argv);
  const QueueAddress& address() const { return m_address; }
  int reconnects() const { return m_reconnects; }

private:
  void connect();
  QueueAddress m_address;
  double m_give_up_s;
  redisContext* m_context = nullptr;
  int m_reconnects = 0;
};

} // namespace kbench::queue
