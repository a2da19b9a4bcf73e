#include "pipeline/rank_group.hpp"

#include "core/json_io.hpp"
#include "measure/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <arpa/inet.h>
#include <condition_variable>
#include <future>
#include <mutex>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace kbench {

namespace {

// How long the other ranks get to end on their own after the first failure: a peer's death
// makes them fail within moments (a reset connection), and waiting lets the rank at fault, not
// the first to notice, be reported.
constexpr auto kPeerGrace = std::chrono::seconds(3);

// Errors a rank raises because a peer went away; they say nothing about the rank itself.
bool peer_induced(const PhaseOutcome& outcome) {
  static const char* const patterns[] = {"Connection reset by peer",
                                         "Connection closed by peer",
                                         "DistBackendError",
                                         "remote process exited",
                                         "Broken pipe",
                                         "NCCL communicator was aborted",
                                         "ncclRemoteError",
                                         "ProcessGroupNCCL",
                                         "gloo/transport"};
  for (const char* pattern : patterns) {
    if (outcome.message.find(pattern) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Lower is more likely the cause: a rank that died by itself, then one that raised its own
// error, then one that ran out of time, then errors caused by a peer, then ranks kbench ended.
int blame(const PhaseOutcome& outcome, bool ended_by_kbench) {
  if (outcome.ok) {
    return 99;
  }
  if (ended_by_kbench) {
    return 4;
  }
  if (peer_induced(outcome)) {
    return 3;
  }
  using Kind = sandbox::WorkerReply::Kind;
  return outcome.reply == Kind::died ? 0 : outcome.reply == Kind::timed_out ? 2 : 1;
}

// The valid (non-negative) samples of an answer's array field.
std::vector<double> numbers(const nlohmann::json& body, const char* key) {
  auto out = number_array(body, key);
  std::erase_if(out, [](double v) { return v < 0; });
  return out;
}

} // namespace

RankOutcome run_ranks(const std::vector<sandbox::WorkerClient*>& ranks,
                      const std::function<nlohmann::json(int rank)>& request_for,
                      std::chrono::milliseconds deadline, WorkerRole role, const std::string& doing,
                      const std::string& candidate_path) {
  RankOutcome out;
  out.per_rank.resize(ranks.size());
  if (ranks.size() == 1) {
    out.per_rank[0] = run_phase(*ranks[0], request_for(0), deadline, role, doing, candidate_path);
    out.first = out.per_rank[0];
    out.failed_rank = out.first.ok ? -1 : 0;
    return out;
  }
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t finished = 0;
  bool failed = false;
  std::vector<bool> done(ranks.size(), false);
  std::vector<std::future<void>> running;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    running.push_back(std::async(std::launch::async, [&, r] {
      PhaseOutcome outcome = run_phase(*ranks[r], request_for(static_cast<int>(r)), deadline, role,
                                       doing, candidate_path);
      std::lock_guard lock(mutex);
      failed = failed || !outcome.ok;
      out.per_rank[r] = std::move(outcome);
      done[r] = true;
      ++finished;
      changed.notify_all();
    }));
  }
  std::vector<bool> ended_by_kbench(ranks.size(), false);
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return failed || finished == ranks.size(); });
    if (finished < ranks.size()) {
      changed.wait_for(lock, kPeerGrace, [&] { return finished == ranks.size(); });
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        if (!done[r]) {
          ended_by_kbench[r] = true;
          ranks[r]->kill_from_other_thread();
        }
      }
    }
  }
  for (auto& f : running) {
    f.get();
  }
  int best = 99;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int score = blame(out.per_rank[r], ended_by_kbench[r]);
    if (score < best) {
      best = score;
      out.failed_rank = static_cast<int>(r);
    }
  }
  if (out.failed_rank < 0) {
    out.first = out.per_rank[0];
    return out;
  }
  out.first = out.per_rank[static_cast<std::size_t>(out.failed_rank)];
  out.first.message =
      fmt::format("rank {} of {}: {}", out.failed_rank, ranks.size(), out.first.message);
  return out;
}

SideTiming time_side(const std::vector<sandbox::WorkerClient*>& ranks,
                     const nlohmann::json& request, std::chrono::milliseconds deadline,
                     WorkerRole role, const std::string& candidate_path) {
  const char* doing = role == WorkerRole::reference ? "timing the reference" : "timing ModelNew";
  const RankOutcome outcome = run_ranks(
      ranks, [&](int) { return request; }, deadline, role, doing, candidate_path);
  SideTiming out;
  if (!outcome.ok()) {
    out.failure = outcome.first;
    return out;
  }
  out.ok = true;
  TimingSide& side = out.side;
  side.method = outcome.first.body.value("method", "");
  side.l2_flush = outcome.first.body.value("l2_flush", false);
  if (ranks.size() == 1) {
    side.samples_us = numbers(outcome.first.body, "samples_us");
  } else {
    side.samples_us = spans_across_ranks(outcome.per_rank);
    for (const auto& rank : outcome.per_rank) {
      side.per_rank_us.push_back(measure::summarize(numbers(rank.body, "samples_us")));
    }
  }
  side.stats_us = measure::summarize(side.samples_us);
  return out;
}

std::vector<double> spans_across_ranks(const std::vector<PhaseOutcome>& ranks) {
  std::vector<double> spans;
  const auto starts0 = numbers(ranks[0].body, "starts_ns");
  for (std::size_t i = 0; i < starts0.size(); ++i) {
    double first_start = starts0[i], last_end = 0;
    bool complete = true;
    for (const auto& rank : ranks) {
      const auto starts = numbers(rank.body, "starts_ns");
      const auto ends = numbers(rank.body, "ends_ns");
      if (i >= starts.size() || i >= ends.size()) {
        complete = false;
        break;
      }
      first_start = std::min(first_start, starts[i]);
      last_end = std::max(last_end, ends[i]);
    }
    if (complete && last_end >= first_start) {
      spans.push_back((last_end - first_start) / 1000.0);
    }
  }
  return spans;
}

RankTiming measure_ranks(const std::vector<sandbox::WorkerClient*>& reference,
                         const std::vector<sandbox::WorkerClient*>& candidate,
                         const nlohmann::json& request, std::chrono::milliseconds deadline,
                         const std::string& candidate_path) {
  RankTiming out;
  SideTiming candidate_side =
      time_side(candidate, request, deadline, WorkerRole::candidate, candidate_path);
  if (!candidate_side.ok) {
    out.failure = std::move(candidate_side.failure);
    return out;
  }
  SideTiming reference_side =
      time_side(reference, request, deadline, WorkerRole::reference, candidate_path);
  if (!reference_side.ok) {
    out.failure = std::move(reference_side.failure);
    return out;
  }
  out.ok = true;
  out.timing.measured = true;
  if (candidate_side.side.stats_us.median > 0) {
    out.timing.speedup = reference_side.side.stats_us.median / candidate_side.side.stats_us.median;
  }
  out.timing.candidate = std::move(candidate_side.side);
  out.timing.reference = std::move(reference_side.side);
  return out;
}

std::vector<sandbox::WorkerClient*> launch_ranks(const std::string& phase,
                                                 const sched::ScratchDirectory& scratch,
                                                 const RankLauncher& launch) {
  const int world = scratch.world_size();
  if (world == 1) {
    return {&launch(phase, {}, scratch.rank_dir(phase, 0))};
  }
  const int port = free_loopback_port();
  std::vector<sandbox::WorkerClient*> ranks;
  for (int rank = 0; rank < world; ++rank) {
    ranks.push_back(&launch(fmt::format("{}.rank{}", phase, rank),
                            rank_environment(rank, world, port), scratch.rank_dir(phase, rank)));
  }
  return ranks;
}

sandbox::EnvironmentMap rank_environment(int rank, int world_size, int master_port) {
  return {{"RANK", std::to_string(rank)},
          {"LOCAL_RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(world_size)},
          {"LOCAL_WORLD_SIZE", std::to_string(world_size)},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", std::to_string(master_port)}};
}

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    throw std::runtime_error("cannot open a socket to pick a rendezvous port");
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) {
    throw std::runtime_error("cannot bind a loopback port for the ranks' rendezvous");
  }
  return ntohs(address.sin_port);
}

} // namespace kbench
