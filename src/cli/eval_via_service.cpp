// `kbench eval --service URL` (eval_via_service.hpp): submit, poll, print.
#include "cli/eval_via_service.hpp"

#include "core/json_io.hpp"
#include "core/result.hpp"
#include "report/summary.hpp"
#include "service/http_api.hpp"

#include <fmt/format.h>

#include <chrono>
#include <httplib.h>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace kbench::cli {
namespace {

using namespace std::chrono_literals;

// The service queues evaluations behind others; a whole suite's worth ahead is not a hang.
constexpr auto kWaitLimit = 2h;

// The service's own words for a refusal ({"error": ...}), or the body as it came.
std::string error_of(const httplib::Result& answer) {
  const auto body = nlohmann::json::parse(answer->body, nullptr, false);
  return body.is_object() && body.contains("error") && body["error"].is_string()
             ? body["error"].get<std::string>()
             : answer->body.substr(0, 500);
}

} // namespace

int eval_via_service(const ServiceFlags& flags, const CLI::App& command, const EvalOptions& options,
                     const std::string& json_path, bool quiet) {
  const std::string prefix = "kbench eval --service " + flags.url + ": ";
  httplib::Client client(flags.url);
  if (!client.is_valid()) {
    std::cerr << prefix << "not a service address; give http://HOST:PORT as `kbench serve` "
              << "prints it\n";
    return 64;
  }
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(60, 0);
  try {
    if (!flags.token_file.empty()) {
      client.set_bearer_token_auth(
          service::read_token_file(flags.token_file, "--service-token-file"));
    }
  } catch (const std::exception& error) {
    std::cerr << "kbench eval: " << error.what() << "\n";
    return 64;
  }
  std::string body;
  try {
    body = service_request(command, options).dump();
  } catch (const std::exception& error) {
    std::cerr << "kbench eval: " << error.what() << "\n";
    return 64;
  }
  const auto submitted = client.Post("/v1/evaluations", body, "application/json");
  if (!submitted) {
    std::cerr << prefix << "no answer (" << httplib::to_string(submitted.error())
              << "): start it with `kbench serve`, or leave out --service\n";
    return 2;
  }
  if (submitted->status != 202) {
    std::cerr << prefix << "refused the evaluation (HTTP " << submitted->status
              << "): " << error_of(submitted) << "\n";
    return submitted->status / 100 == 4 ? 64 : 2;
  }
  const auto ids = nlohmann::json::parse(submitted->body, nullptr, false);
  if (!ids.is_object() || !ids.contains("ids") || !ids["ids"].is_array() || ids["ids"].empty() ||
      !ids["ids"][0].is_string()) {
    std::cerr << prefix << "answered 202 without an evaluation id: " << submitted->body << "\n";
    return 2;
  }
  const std::string id = ids["ids"][0];
  const auto until = std::chrono::steady_clock::now() + kWaitLimit;
  std::string last_state;
  const auto submitted_at = std::chrono::steady_clock::now();
  for (;;) {
    // Polled often while an answer in about a second is likely (a warm service), then gently.
    const auto pause = std::chrono::steady_clock::now() - submitted_at < 10s ? 25ms : 500ms;
    const auto answer = client.Get("/v1/evaluations/" + id);
    if (!answer || answer->status != 200) {
      std::cerr << prefix << "lost evaluation " << id << " ("
                << (answer ? fmt::format("HTTP {}: {}", answer->status, error_of(answer))
                           : httplib::to_string(answer.error()))
                << ")\n";
      return 2;
    }
    const auto job = nlohmann::json::parse(answer->body, nullptr, false);
    const std::string state = job.is_object() ? job.value("state", "") : "";
    if (!quiet && state != last_state && isatty(STDERR_FILENO)) {
      std::cerr << "kbench: " << state << " (service evaluation " << id << ")...\n";
    }
    last_state = state;
    if (state == "failed" || state == "cancelled") {
      std::cerr << prefix << "evaluation " << id << " " << state << ": " << job.value("message", "")
                << "\n";
      return 2;
    }
    if (state == "done") {
      const auto decoded = result_from_json(job.value("result", nlohmann::json()));
      if (!decoded.value) {
        std::cerr << prefix << "its result could not be read: " << decoded.error << "\n";
        return 2;
      }
      std::cout << report::format_summary(*decoded.value);
      std::cout << "service     " << flags.url << ", evaluation " << id
                << (job.value("cached", false) ? " (answered from its store)" : "") << "\n";
      if (!json_path.empty()) {
        try {
          write_json_file(json_path, job["result"]);
        } catch (const std::exception& error) {
          std::cerr << "kbench eval: " << error.what() << "\n";
          return 2;
        }
      }
      return report::exit_code_for(decoded.value->status);
    }
    if (std::chrono::steady_clock::now() > until) {
      std::cerr << prefix << "evaluation " << id << " still " << state << " after "
                << std::chrono::duration_cast<std::chrono::minutes>(kWaitLimit).count()
                << " minutes; it goes on in the service (GET /v1/evaluations/" << id << ")\n";
      return 2;
    }
    std::this_thread::sleep_for(pause);
  }
}

} // namespace kbench::cli
