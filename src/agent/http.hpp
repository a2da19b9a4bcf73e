#pragma once
// One HTTP exchange with a model server, through libcurl: a JSON POST (or a GET) with headers
// and a per-call timeout, returning the status, body, headers and how long it took. Transport
// failures (refused, reset, timed out) are data here, not exceptions: the caller decides what
// is retried (agent/model_client.cpp).
#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace kbench::agent {

struct HttpReply {
  long status = 0; // 0: no answer (see error)
  std::string body;
  std::map<std::string, std::string> headers; // names in lower case
  double seconds = 0;
  bool timed_out = false;
  std::string error; // libcurl's message when there was no answer
};

// `method` is "POST" or "GET"; `body` is sent for POST. Safe to call from several threads.
HttpReply http_exchange(const std::string& method, const std::string& url,
                        const std::vector<std::string>& headers, const std::string& body,
                        std::chrono::milliseconds timeout);

} // namespace kbench::agent
