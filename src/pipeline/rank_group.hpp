#pragma once
// The ranks of one side (reference or candidate) of a multi-process evaluation (DESIGN
// section 2, PopcornBench's collective problems): one worker per rank, one request to every
// rank at once, and the first rank that fails ends the others. A rank whose peer died waits
// in its collective until its deadline otherwise, and its own "error" only says so.
#include "pipeline/worker_phase.hpp"

#include <functional>
#include <vector>

namespace kbench {

struct RankOutcome {
  // The first failure, its message prefixed with the rank ("rank 1: ..."), or rank 0's answer
  // when every rank succeeded.
  PhaseOutcome first;
  std::vector<PhaseOutcome> per_rank; // in rank order; ranks ended by a peer's failure read died
  int failed_rank = -1;
  bool ok() const { return failed_rank < 0; }
};

RankOutcome run_ranks(const std::vector<sandbox::WorkerClient*>& ranks,
                      const std::function<nlohmann::json(int rank)>& request_for,
                      std::chrono::milliseconds deadline, WorkerRole role, const std::string& doing,
                      const std::string& candidate_path);

// The rendezvous variables of one rank (torchrun's names), on loopback.
sandbox::EnvironmentMap rank_environment(int rank, int world_size, int master_port);

// A TCP port on 127.0.0.1 that was free a moment ago, for MASTER_PORT. The ranks bind it a
// second later; another process taking it in between makes the rendezvous fail loudly.
int free_loopback_port();

} // namespace kbench
