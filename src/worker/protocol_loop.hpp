#pragma once
// The worker's request loop: a JSON request per line on stdin, the answer on the response fd.

namespace kbench::worker {

// Serves requests until stdin closes or an `exit` request arrives. Returns the exit code.
// After an answer marked "fatal" (a CUDA fault: the context is unusable) it stops too.
int serve(int response_fd);

} // namespace kbench::worker
