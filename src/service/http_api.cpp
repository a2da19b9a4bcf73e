#include "service/http_api.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <fstream>
#include <httplib.h>
#include <stdexcept>

namespace kbench::service {

struct HttpApi::Server {
  httplib::Server http;
};

namespace {

constexpr const char* kRoutes =
    "POST /v1/evaluations, GET /v1/evaluations/{id}, DELETE /v1/evaluations/{id}, "
    "GET /v1/queue, GET /v1/health";

void reply(httplib::Response& response, const Answer& answer) {
  response.status = answer.status;
  response.set_content(answer.body.dump(2) + "\n", "application/json");
}

// Equal texts, compared in a time that does not depend on where they differ.
bool same_secret(const std::string& given, const std::string& secret) {
  if (given.size() != secret.size() || secret.empty()) {
    return false;
  }
  unsigned char difference = 0;
  for (std::size_t i = 0; i < secret.size(); ++i) {
    difference |= static_cast<unsigned char>(given[i] ^ secret[i]);
  }
  return difference == 0;
}

} // namespace

bool is_loopback_address(const std::string& address) {
  if (address == "localhost") {
    return true;
  }
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  return inet_pton(AF_INET6, address.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

std::string read_token_file(const std::filesystem::path& path, std::string_view flag) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(fmt::format("{} {}: cannot be read", flag, path.string()));
  }
  std::string token;
  std::getline(in, token);
  const auto first = token.find_first_not_of(" \t\r");
  const auto last = token.find_last_not_of(" \t\r");
  token = first == std::string::npos ? "" : token.substr(first, last - first + 1);
  if (token.size() < 16) {
    throw std::runtime_error(
        fmt::format("{} {}: its first line must hold the token, at least 16 characters (e.g. "
                    "`openssl rand -hex 32 > {}`)",
                    flag, path.string(), path.string()));
  }
  return token;
}

HttpApi::HttpApi(EvaluationService& service, HttpSettings settings)
    : m_server(std::make_unique<Server>()) {
  if (!is_loopback_address(settings.bind) && settings.token.empty()) {
    throw std::runtime_error(fmt::format(
        "--bind {}: kbench serve answers other machines only with a bearer token: give "
        "--token-file FILE (every request then needs `Authorization: Bearer <token>`), or bind "
        "127.0.0.1",
        settings.bind));
  }
  auto& http = m_server->http;
  http.set_payload_max_length(256u << 20);
  const std::string token = settings.token;
  http.set_pre_routing_handler(
      [token](const httplib::Request& request, httplib::Response& response) {
        if (token.empty()) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        const std::string given = request.get_header_value("Authorization");
        if (given.rfind("Bearer ", 0) == 0 && same_secret(given.substr(7), token)) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        response.set_header("WWW-Authenticate", "Bearer");
        reply(response, {401,
                         {{"error", "this service needs `Authorization: Bearer <token>` (the "
                                    "token in its --token-file)"}}});
        return httplib::Server::HandlerResponse::Handled;
      });
  http.Post("/v1/evaluations",
            [&service](const httplib::Request& request, httplib::Response& response) {
              reply(response, service.submit(request.body));
            });
  http.Get(R"(/v1/evaluations/([A-Za-z0-9_-]+))",
           [&service](const httplib::Request& request, httplib::Response& response) {
             reply(response, service.get(request.matches[1]));
           });
  http.Delete(R"(/v1/evaluations/([A-Za-z0-9_-]+))",
              [&service](const httplib::Request& request, httplib::Response& response) {
                reply(response, service.cancel(request.matches[1]));
              });
  http.Get("/v1/queue", [&service](const httplib::Request&, httplib::Response& response) {
    reply(response, service.queue());
  });
  http.Get("/v1/health", [&service](const httplib::Request&, httplib::Response& response) {
    reply(response, service.health());
  });
  // Every other GET: a dashboard page, or a JSON 404 under /v1 (an API client's mistake).
  const PageRenderer pages = settings.pages;
  const std::string policy = settings.content_security_policy;
  http.Get(R"(/.*)", [pages, policy](const httplib::Request& request, httplib::Response& response) {
    if (request.path.rfind("/v1/", 0) == 0 || !pages) {
      reply(response, {404,
                       {{"error", fmt::format("no such endpoint: GET {}; the API: {}", request.path,
                                              kRoutes)}}});
      return;
    }
    std::map<std::string, std::string> query;
    for (const auto& [key, value] : request.params) {
      query[key] = value;
    }
    const PageAnswer answer = pages(request.path, query);
    response.status = answer.status;
    if (!policy.empty()) {
      response.set_header("Content-Security-Policy", policy);
    }
    response.set_header("X-Content-Type-Options", "nosniff");
    response.set_content(answer.body, answer.content_type.c_str());
  });
  http.set_error_handler([](const httplib::Request& request, httplib::Response& response) {
    if (response.status == 404 && response.body.empty()) {
      reply(response, {404,
                       {{"error", fmt::format("no such endpoint: {} {}; the API: {}",
                                              request.method, request.path, kRoutes)}}});
    }
  });
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        reply(response, {500, {{"error", "kbench serve failed on this request: " + what}}});
      });
  if (settings.port == 0) {
    m_port = http.bind_to_any_port(settings.bind);
  } else if (http.bind_to_port(settings.bind, settings.port)) {
    m_port = settings.port;
  } else {
    m_port = -1;
  }
  if (m_port <= 0) {
    throw std::runtime_error(fmt::format("cannot listen on {}:{} (in use, or not an address of "
                                         "this machine); choose another --port or --bind",
                                         settings.bind, settings.port));
  }
}

HttpApi::~HttpApi() = default;

void HttpApi::serve() {
  m_server->http.listen_after_bind();
}

void HttpApi::stop() {
  m_server->http.stop();
}

} // namespace kbench::service
