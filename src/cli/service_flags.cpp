// The parts of `kbench eval --service` that need no HTTP client (eval_via_service.hpp).
#include "cli/eval_via_service.hpp"
#include "core/source_files.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace kbench::cli {
namespace {

// What a service request carries, by the flag that sets it; and the flags of this command
// itself (output and the service's address).
const std::vector<std::string>& carried_flags() {
  static const std::vector<std::string> flags = {
      "problem", "candidate",   "--device", "--variant", "--precision", "--trials",
      "--rules", "--no-timing", "--json",   "--quiet",   "--service",   "--service-token-file"};
  return flags;
}

bool given(const CLI::App& command, const std::string& name) {
  const auto* option = command.get_option_no_throw(name);
  return option != nullptr && option->count() > 0;
}

} // namespace

void add_service_flags(CLI::App& command, ServiceFlags& flags) {
  command.add_option("--service", flags.url,
                     "evaluate in the running `kbench serve` at this URL (http://HOST:PORT), "
                     "whose workers are warm (the two files are sent as text)");
  command.add_option("--service-token-file", flags.token_file,
                     "file holding the service's bearer token (a service not on loopback)");
}

std::vector<std::string> flags_a_service_cannot_take(const CLI::App& command) {
  std::vector<std::string> refused;
  for (const auto* option : command.get_options()) {
    const std::string name = option->get_name();
    if (option->count() > 0 && name != "--help" &&
        std::find(carried_flags().begin(), carried_flags().end(), name) == carried_flags().end()) {
      refused.push_back(name);
    }
  }
  return refused;
}

nlohmann::json service_request(const CLI::App& command, const EvalOptions& options) {
  nlohmann::json carried = nlohmann::json::object();
  if (given(command, "--device")) {
    carried["device"] = options.device;
  }
  if (given(command, "--variant")) {
    carried["variant"] = options.variant;
  }
  if (given(command, "--precision")) {
    carried["precision"] = options.precision;
  }
  if (given(command, "--trials")) {
    carried["trials"] = options.trials;
  }
  if (given(command, "--rules")) {
    carried["rules"] = options.rules.string();
  }
  if (options.no_timing) {
    carried["timing"] = false;
  }
  // Sent as text, as python/kbench_client does: the service needs no --allow-path over them,
  // and the files may live on another machine than the service.
  auto source = [](const std::filesystem::path& file, const char* what) {
    std::string error;
    const auto read = read_source_file(file, what, error);
    if (!read) {
      throw std::runtime_error(error);
    }
    return nlohmann::json{{"source", read->text}, {"filename", file.filename().string()}};
  };
  return {{"problem", source(options.problem, "problem")},
          {"candidate", source(options.candidate, "candidate")},
          {"options", carried}};
}

} // namespace kbench::cli
