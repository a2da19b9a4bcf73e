#pragma once
// The HTTP side of `kbench serve` (docs/service.md): the /v1 routes onto the evaluation service,
// answers in JSON, and the access rule: loopback by default; any other address only with a
// bearer token (--token-file), which every request must then carry.
#include "service/evaluation_service.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace kbench::service {

// A page answer from whoever draws the pages (the dashboard, web/site.hpp; the command line
// wires it in, so that this layer does not depend on that one).
struct PageAnswer {
  int status = 200;
  std::string content_type;
  std::string body;
};
using PageRenderer = std::function<PageAnswer(const std::string& path,
                                              const std::map<std::string, std::string>& query)>;

struct HttpSettings {
  std::string bind = "127.0.0.1";
  int port = 8080;                     // 0: any free port (port() says which)
  std::string token;                   // empty: no token asked for (loopback only)
  PageRenderer pages;                  // GETs outside /v1; none: 404
  std::string content_security_policy; // sent with every page
};

bool is_loopback_address(const std::string& address);

// The token in `path` (its first line, without surrounding white space). Throws
// std::runtime_error naming `flag` and the file when it cannot be read or holds no token.
std::string read_token_file(const std::filesystem::path& path,
                            std::string_view flag = "--token-file");

class HttpApi {
public:
  // Binds; throws std::runtime_error naming the address when it cannot, or when a non-loopback
  // address comes without a token.
  HttpApi(EvaluationService& service, HttpSettings settings);
  ~HttpApi();
  int port() const { return m_port; }
  // Answers requests until stop() (from another thread or a signal handler's thread).
  void serve();
  void stop();

private:
  struct Server;
  std::unique_ptr<Server> m_server;
  int m_port = 0;
};

} // namespace kbench::service
