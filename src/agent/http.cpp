#include "agent/http.hpp"

#include <algorithm>
#include <cctype>
#include <curl/curl.h>
#include <memory>
#include <mutex>

namespace kbench::agent {
namespace {

std::once_flag g_curl_ready;

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* reply) {
  static_cast<HttpReply*>(reply)->body.append(data, size * count);
  return size * count;
}

std::size_t append_header(char* data, std::size_t size, std::size_t count, void* reply) {
  const std::string line(data, size * count);
  const auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string value = line.substr(colon + 1);
    const auto first = value.find_first_not_of(" \t");
    const auto last = value.find_last_not_of(" \t\r\n");
    static_cast<HttpReply*>(reply)->headers[name] =
        first == std::string::npos ? "" : value.substr(first, last - first + 1);
  }
  return size * count;
}

} // namespace

HttpReply http_exchange(const std::string& method, const std::string& url,
                        const std::vector<std::string>& headers, const std::string& body,
                        std::chrono::milliseconds timeout) {
  std::call_once(g_curl_ready, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  HttpReply reply;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    reply.error = "libcurl could not start a transfer";
    return reply;
  }
  curl_slist* list = nullptr;
  for (const auto& header : headers) {
    list = curl_slist_append(list, header.c_str());
  }
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(list,
                                                                          curl_slist_free_all);
  CURL* handle = curl.get();
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min<long long>(timeout.count(), 30000)));
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L); // threads: no SIGALRM for timeouts
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &reply);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, append_header);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &reply);
  curl_easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, ""); // whatever the server compresses with
  if (method == "POST") {
    curl_easy_setopt(handle, CURLOPT_POST, 1L);
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  const auto start = std::chrono::steady_clock::now();
  const CURLcode code = curl_easy_perform(handle);
  reply.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (code != CURLE_OK) {
    reply.timed_out = code == CURLE_OPERATION_TIMEDOUT;
    reply.error = curl_easy_strerror(code);
    reply.status = 0;
    return reply;
  }
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

} // namespace kbench::agent
