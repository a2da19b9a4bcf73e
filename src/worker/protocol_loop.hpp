#pragma once
// The worker's request loop: a JSON request per line on stdin, the answer on the response fd.

#include <optional>
#include <string>

namespace kbench::worker {

// Inside a request: `send_interim` writes `message` (one JSON object line with "interim": true)
// to the orchestrator; `receive_interim` returns the line it answers. Apart, so that a timed call
// can say it returned before the device is synchronised and read the answer after. False or
// empty when the channel is closed or `serve` is not running (the importable extension has no
// channel).
bool send_interim(const std::string& message);
std::optional<std::string> receive_interim();


// Serves requests until stdin closes or an `exit` request arrives. Returns the exit code.
// After an answer marked "fatal" (a CUDA fault: the context is unusable) it stops too.
int serve(int response_fd);

} // namespace kbench::worker
