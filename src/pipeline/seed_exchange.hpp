#pragma once
// The secret seeds of the timed calls and the candidate's side of their exchange
// (docs/architecture.md, "Timed inputs"): every timed call of every side gets an input set drawn
// right before it from a seed taken from the kernel's entropy pool, and the candidate's process
// learns each seed only once its previous call has returned.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

// A seed no process can predict: from the kernel's entropy pool, drawn when it is needed. The
// candidate's process sees each seed only when its call is next, and never the secret behind
// the others, so it can neither regenerate the inputs ahead nor recognise a repeat.
std::uint64_t secret_seed();
std::vector<std::uint64_t> secret_seeds(int count);

// The candidate's side of one block's per-call exchange (worker_client.hpp, InterimHandler):
// message {"returned": i} after i calls have returned; the answer carries the seed of call i
// and the sample seed of call i - 1, drawn only now, after that call returned. Any other
// message breaks the protocol: only the candidate's code would send one.
class SeedExchange {
public:
  explicit SeedExchange(const std::vector<std::uint64_t>& seeds) : m_seeds(seeds) {}

  std::optional<nlohmann::json> operator()(const nlohmann::json& message);

  const std::vector<std::uint64_t>& sample_seeds() const { return m_sample_seeds; }
  bool violated() const { return !m_violation.empty(); }
  // Empty when the worker asked before each call and once after the last.
  std::string problem() const;

private:
  const std::vector<std::uint64_t>& m_seeds;
  std::vector<std::uint64_t> m_sample_seeds;
  std::size_t m_answered = 0; // messages answered: the first asks for call 0's seed
  std::string m_violation;
};

} // namespace kbench
