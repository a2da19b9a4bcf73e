#pragma once
// The ranks of one side (reference or candidate) of a multi-process evaluation
// (docs/architecture.md, PopcornBench's collective problems): one worker per rank, one request to
// every rank at once, and the first rank that fails ends the others. A rank whose peer died waits
// in its collective until its deadline otherwise, and its own "error" only says so. The ranks'
// timing lives here too: it is the one measurement that must combine the ranks' answers.
#include "pipeline/worker_phase.hpp"
#include "sched/scratch_directory.hpp"

#include <functional>
#include <optional>
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

// One side's timing across its ranks.
struct SideTiming {
  bool ok = false;
  PhaseOutcome failure; // the first failure (RankOutcome::first), when !ok
  TimingSide side;
};

// Sends `request` (requests::time) to every rank of one side. With one rank its samples are
// that rank's; with several, each sample spans the ranks (spans_across_ranks) and each rank's
// own samples are summarised apart.
SideTiming time_side(const std::vector<sandbox::WorkerClient*>& ranks,
                     const nlohmann::json& request, std::chrono::milliseconds deadline,
                     WorkerRole role, const std::string& candidate_path);

// A sample of several ranks spans from the barrier every rank left (the earliest start) to the
// slowest rank's completion: the ranks share the host's monotonic clock, so their stamps
// compare. A sample some rank lacks, or one that ends before it starts, is left out. In
// microseconds, from the answers' starts_ns and ends_ns.
std::vector<double> spans_across_ranks(const std::vector<PhaseOutcome>& ranks);

// Both sides of a collective evaluation, each timed on its own (the candidate first). `timing`
// holds the two sides and the speedup (reference median / candidate median, when the latter is
// > 0), as run_paired_timing's does for one rank.
struct RankTiming {
  bool ok = false;
  PhaseOutcome failure; // the failing side's, when !ok
  TimingInfo timing;
};
RankTiming measure_ranks(const std::vector<sandbox::WorkerClient*>& reference,
                         const std::vector<sandbox::WorkerClient*>& candidate,
                         const nlohmann::json& request, std::chrono::milliseconds deadline,
                         const std::string& candidate_path);

// Starts the workers of one side: `launch` gets each worker's name in the result ("candidate",
// "candidate.rank1"), its rendezvous variables (none with one rank) and its directory (the
// scratch's rank_dir of `phase`). With several ranks each gets torchrun's variables and the side
// its own port, since the reference's and the candidate's groups are alive at once.
using RankLauncher = std::function<sandbox::WorkerClient&(const std::string& name,
                                                          const sandbox::EnvironmentMap& rendezvous,
                                                          const std::filesystem::path& directory)>;
std::vector<sandbox::WorkerClient*> launch_ranks(const std::string& phase,
                                                 const sched::ScratchDirectory& scratch,
                                                 const RankLauncher& launch);

// The rendezvous variables of one rank (torchrun's names), on loopback.
sandbox::EnvironmentMap rank_environment(int rank, int world_size, int master_port);

// A TCP port on 127.0.0.1 that was free a moment ago, for MASTER_PORT. The ranks bind it a
// second later; another process taking it in between makes the rendezvous fail loudly.
int free_loopback_port();

} // namespace kbench
