#pragma once
// The orchestrator's side of the worker protocol: one JSON request per line on the worker's
// stdin, one JSON response per line on its fd 3. Replies are untrusted (the candidate's code
// runs in the worker), so everything read here is validated by the caller before use.
#include "sandbox/output_capture.hpp"
#include "sandbox/process.hpp"
#include "sandbox/transfer_files.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kbench::sandbox {

struct WorkerReply {
  enum class Kind {
    answered,       // `body` holds the worker's JSON response
    died,           // the worker exited or was killed before answering; see `exit`
    timed_out,      // the deadline passed; the worker's group was killed
    protocol_error, // the worker answered something that is not a JSON object line
  };
  Kind kind = Kind::protocol_error;
  nlohmann::json body;
  ExitStatus exit;
  std::string detail; // for protocol errors: what was wrong
};

// A message the worker sends in the middle of a request, an object with "interim": true (the
// timing loop's per-call exchange: the worker says a call returned, the orchestrator answers
// with what the next call needs). The handler's answer, when it gives one, goes to the worker's
// stdin as one line; an interim message without a handler is a protocol error. A message that
// asks for a transfer file ("transfer_file") is answered here, for every request, by the
// client's TransferFiles (sandbox/transfer_files.hpp), never by the handler.
using InterimHandler = std::function<std::optional<nlohmann::json>(const nlohmann::json&)>;

// Where a worker's lifetime went, by request op: how many, when the first was sent (seconds
// after the worker started) and the seconds spent waiting for their answers. The gaps are the
// orchestrator's own time (waiting on the other side, comparing outputs).
struct RequestTime {
  std::string op;
  int count = 0;
  double first_at_s = 0;
  double seconds = 0;
};

class WorkerClient {
public:
  // With `fork`, the worker is forked by the fork server for its key (fork_server.hpp) unless
  // KBENCH_FORK_SERVER=off or the server cannot be used; otherwise it is spawned.
  WorkerClient(const SpawnSpec& spec, std::size_t output_keep_bytes, bool fork = false);
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;
  ~WorkerClient();

  // Sends one request and waits for its answer until `deadline` has passed.
  WorkerReply request(const nlohmann::json& request, std::chrono::milliseconds deadline,
                      const InterimHandler& on_interim = {});
  // Asks the worker to leave, then kills its group if it has not within `grace`.
  void shutdown(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));
  bool alive();
  // SIGKILL to the worker's group while another thread waits in `request` (a rank whose peer
  // failed would wait in a collective until its deadline); that call then returns `died`.
  // Only the pid is read, which never changes, so it is safe across threads.
  void kill_from_other_thread();
  // Moves the current request's deadline later by `waited`: called by an interim handler (on
  // the orchestrator's side, never at a worker's word) for time the worker spent blocked on
  // the orchestrator, such as a check waiting for its GPU's lane (sched/gpu_lane.hpp).
  void pause_deadline(std::chrono::steady_clock::duration waited) { m_deadline_pause += waited; }

  const OutputCapture& stdout_capture() const { return m_stdout; }
  const OutputCapture& stderr_capture() const { return m_stderr; }
  pid_t pid() const { return m_process.pid(); }
  double lifetime_s() const { return m_process.lifetime_s(); }
  std::chrono::steady_clock::time_point started_at() const { return m_process.spawned_at(); }
  const std::vector<Protection>& protections() const { return m_process.protections(); }
  // "forked" or "spawned"; and why the fork server could not be used, once per server.
  const std::string& started() const { return m_process.started(); }
  const std::string& start_warning() const { return m_start_warning; }
  const std::vector<RequestTime>& request_times() const { return m_request_times; }

private:
  // Reads whatever the worker's pipes hold until a response line arrives, the worker dies or
  // the deadline passes.
  WorkerReply await_reply(std::chrono::steady_clock::time_point deadline,
                          const InterimHandler& on_interim);
  WorkerReply reply_after_death();

  std::string m_start_warning; // before m_process: the start fills it
  Process m_process;
  OutputCapture m_stdout;
  OutputCapture m_stderr;
  std::string m_pending;                    // response bytes not yet terminated by a newline
  std::vector<RequestTime> m_request_times; // in the order each op was first sent
  TransferFiles m_transfers;
  std::chrono::steady_clock::duration m_deadline_pause{}; // of the current request
};

} // namespace kbench::sandbox
