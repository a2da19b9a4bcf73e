#include "pipeline/seed_exchange.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <stdexcept>
#include <sys/random.h>

namespace kbench {

std::uint64_t secret_seed() {
  std::uint64_t value = 0;
  auto* bytes = reinterpret_cast<char*>(&value);
  std::size_t got = 0;
  while (got < sizeof value) {
    const ssize_t n = ::getrandom(bytes + got, sizeof value - got, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw std::runtime_error("getrandom failed: no entropy for the timed inputs' seeds");
    }
    got += static_cast<std::size_t>(n);
  }
  return value;
}

std::vector<std::uint64_t> secret_seeds(int count) {
  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(count));
  for (auto& seed : seeds) {
    seed = secret_seed();
  }
  return seeds;
}

std::optional<nlohmann::json> SeedExchange::operator()(const nlohmann::json& message) {
  const auto returned = message.find("returned");
  const bool expected = m_violation.empty() && returned != message.end() &&
                        returned->is_number_integer() &&
                        returned->get<std::int64_t>() == static_cast<std::int64_t>(m_answered) &&
                        m_answered <= m_seeds.size();
  if (!expected) {
    if (m_violation.empty()) {
      m_violation = fmt::format("the candidate's process sent {} where the harness expected "
                                "that {} calls had returned: code other than the harness's "
                                "used its channel to the orchestrator",
                                message.dump().substr(0, 200), m_answered);
    }
    return nlohmann::json{{"error", "protocol"}};
  }
  nlohmann::json answer = nlohmann::json::object();
  if (m_answered > 0) {
    m_sample_seeds.push_back(secret_seed());
    answer["sample_seed"] = m_sample_seeds.back();
  }
  if (m_answered < m_seeds.size()) {
    answer["seed"] = m_seeds[m_answered];
  }
  ++m_answered;
  return answer;
}

std::string SeedExchange::problem() const {
  if (!m_violation.empty()) {
    return m_violation;
  }
  if (m_answered != m_seeds.size() + 1) {
    return fmt::format("the candidate's process reported {} of {} timed calls returned",
                       m_answered == 0 ? 0 : m_answered - 1, m_seeds.size());
  }
  return {};
}

} // namespace kbench
