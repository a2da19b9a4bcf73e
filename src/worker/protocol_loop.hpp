#pragma once
// The worker's request loop: a JSON request per line on stdin, the answer on the response fd.

#include <optional>
#include <string>

namespace kbench::worker {

// Inside a request: writes `message` (one JSON object line with "interim": true) to the
// orchestrator and returns the line it answers. Empty when the channel is closed or `serve` is
// not running (the importable extension has no channel).
std::optional<std::string> converse(const std::string& message);


// Serves requests until stdin closes or an `exit` request arrives. Returns the exit code.
// After an answer marked "fatal" (a CUDA fault: the context is unusable) it stops too.
int serve(int response_fd);

} // namespace kbench::worker
