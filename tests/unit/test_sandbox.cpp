// The workers' sandbox (docs/architecture.md, "Sandbox"): small children spawned through
// Process::spawn with a SandboxPolicy try what a hostile candidate would, and the protections
// the child reports must match what it could do.
#include "pipeline/worker_phase.hpp"
#include "sandbox/environment.hpp"
#include "sandbox/landlock.hpp"
#include "sandbox/process.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kbench::sandbox;
namespace fs = std::filesystem;

namespace {

std::string python() {
  for (const char* candidate : {"/usr/bin/python3", "/usr/local/bin/python3"}) {
    if (access(candidate, X_OK) == 0) {
      return candidate;
    }
  }
  return {};
}

struct Ran {
  int code = -1;
  std::string out;
  std::vector<Protection> protections;
};

// Runs `argv` under `spec`'s policy and returns its exit code and stdout.
Ran run(SpawnSpec spec, std::vector<std::string> argv) {
  spec.argv = std::move(argv);
  spec.environment = to_envp(worker_environment({}));
  Process p = Process::spawn(spec);
  p.close_request_fd();
  Ran ran;
  char buffer[4096];
  for (ssize_t n; (n = read(p.stdout_fd(), buffer, sizeof buffer)) > 0;) {
    ran.out.append(buffer, static_cast<std::size_t>(n));
  }
  const ExitStatus status = p.wait();
  ran.code = status.signaled ? 128 + status.signal : status.code;
  ran.protections = p.protections();
  return ran;
}

Ran run_python(const SpawnSpec& spec, const std::string& code) {
  return run(spec, {python(), "-I", "-c", code});
}

const Protection* find(const std::vector<Protection>& list, const std::string& name) {
  for (const auto& p : list) {
    if (p.name == name) {
      return &p;
    }
  }
  return nullptr;
}

class Scratch {
public:
  Scratch() {
    char pattern[] = "/tmp/kbench-sandbox-test-XXXXXX";
    m_root = mkdtemp(pattern);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(m_root, ignored);
  }
  const fs::path& root() const { return m_root; }

private:
  fs::path m_root;
};

// A listening TCP socket on 127.0.0.1 in the test's (the orchestrator's) namespace.
class Listener {
public:
  Listener() {
    m_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(m_fd, 4);
    socklen_t length = sizeof address;
    getsockname(m_fd, reinterpret_cast<sockaddr*>(&address), &length);
    m_port = ntohs(address.sin_port);
  }
  ~Listener() { close(m_fd); }
  int port() const { return m_port; }

private:
  int m_fd = -1;
  int m_port = 0;
};

// A macro, not a function: GTEST_SKIP only leaves the function it is written in.
#define REQUIRE_LANDLOCK(ran)                                                                      \
  do {                                                                                             \
    const Protection* landlock = find((ran).protections, "filesystem");                            \
    ASSERT_NE(landlock, nullptr);                                                                  \
    if (!landlock->active) {                                                                       \
      GTEST_SKIP() << "no Landlock here: " << landlock->detail;                                    \
    }                                                                                              \
  } while (false)

std::string connect_script(int port) {
  return "import socket\n"
         "s = socket.socket()\n"
         "s.settimeout(3)\n"
         "try:\n"
         "    s.connect(('127.0.0.1', " +
         std::to_string(port) +
         "))\n"
         "    print('connected')\n"
         "except OSError as e:\n"
         "    print('failed', e.errno)\n";
}

SpawnSpec full_policy(const Scratch& scratch) {
  SpawnSpec spec;
  spec.working_directory = scratch.root() / "work";
  fs::create_directories(spec.working_directory);
  spec.sandbox.isolate_network = true;
  spec.sandbox.filter_syscalls = true;
  spec.sandbox.restrict_filesystem = true;
  spec.sandbox.writable = {scratch.root() / "work", "/dev"};
  spec.sandbox.unreadable = {scratch.root() / "reference"};
  spec.limits.file_size_bytes = rlim_t{1} << 30;
  spec.limits.cpu_seconds = 600;
  spec.limits.processes_above_current = 4096;
  return spec;
}

} // namespace

TEST(Sandbox, NoConnectionToTheOrchestratorsLoopback) {
  if (python().empty()) {
    GTEST_SKIP() << "no /usr/bin/python3";
  }
  Scratch scratch;
  Listener listener;
  SpawnSpec spec;
  spec.working_directory = scratch.root();
  spec.sandbox.isolate_network = true;
  const Ran ran = run_python(spec, connect_script(listener.port()));
  const Protection* network = find(ran.protections, "network");
  ASSERT_NE(network, nullptr);
  if (!network->active) {
    GTEST_SKIP() << "neither namespaces nor seccomp are allowed here: " << network->detail;
  }
  EXPECT_EQ(ran.code, 0) << ran.out;
  EXPECT_EQ(ran.out.rfind("failed", 0), 0u) << ran.out;
}

TEST(Sandbox, LoopbackWorksInsideTheNamespace) {
  if (python().empty()) {
    GTEST_SKIP() << "no /usr/bin/python3";
  }
  Scratch scratch;
  SpawnSpec spec;
  spec.working_directory = scratch.root();
  spec.sandbox.isolate_network = true;
  const Ran ran = run_python(spec, "import socket\n"
                                   "l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen()\n"
                                   "c = socket.create_connection(l.getsockname(), timeout=3)\n"
                                   "print('ok')\n");
  const Protection* network = find(ran.protections, "network");
  ASSERT_NE(network, nullptr);
  if (!network->active || network->detail.find("namespace") == std::string::npos) {
    GTEST_SKIP() << "no network namespace here: " << network->detail;
  }
  EXPECT_NE(network->detail.find("loopback up"), std::string::npos) << network->detail;
  EXPECT_EQ(ran.out, "ok\n");
}

TEST(Sandbox, RanksKeepTheLoopbackAndSaySo) {
  if (python().empty()) {
    GTEST_SKIP() << "no /usr/bin/python3";
  }
  Scratch scratch;
  Listener listener;
  SpawnSpec spec;
  spec.working_directory = scratch.root();
  spec.sandbox.isolate_network = true;
  spec.sandbox.allow_loopback_network = true;
  spec.sandbox.filter_syscalls = true; // the deny-list alone leaves TCP alone
  const Ran ran = run_python(spec, connect_script(listener.port()));
  EXPECT_EQ(ran.out, "connected\n");
  const Protection* network = find(ran.protections, "network");
  ASSERT_NE(network, nullptr);
  EXPECT_FALSE(network->active);
  EXPECT_EQ(network->detail, "off: ranks of a collective evaluation talk over loopback");
  EXPECT_FALSE(network->warning.empty());
}

TEST(Sandbox, PtraceAndProcessVmReadvAreDenied) {
  if (python().empty()) {
    GTEST_SKIP() << "no /usr/bin/python3";
  }
  Scratch scratch;
  SpawnSpec spec;
  spec.working_directory = scratch.root();
  spec.sandbox.filter_syscalls = true;
  const Ran ran = run_python(
      spec, "import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "r = libc.ptrace(0, 0, None, None)\n"
            "print('ptrace', r, ctypes.get_errno())\n"
            "buf = ctypes.create_string_buffer(8)\n"
            "class IoVec(ctypes.Structure):\n"
            "    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
            "v = IoVec(ctypes.cast(buf, ctypes.c_void_p), 8)\n"
            "libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_ulong,\n"
            "    ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]\n"
            "ctypes.set_errno(0)\n"
            "r = libc.process_vm_readv(os.getppid(), ctypes.byref(v), 1, ctypes.byref(v), 1, 0)\n"
            "print('vm_readv', r, ctypes.get_errno())\n"
            "r = libc.personality(0x0040000)\n" // ADDR_NO_RANDOMIZE
            "print('personality', r, ctypes.get_errno())\n"
            "print('query', libc.personality(0xffffffff) >= 0)\n");
  const Protection* filter = find(ran.protections, "syscall_filter");
  ASSERT_NE(filter, nullptr);
  if (!filter->active) {
    GTEST_SKIP() << "seccomp is not allowed here: " << filter->detail;
  }
  EXPECT_EQ(ran.out, "ptrace -1 1\nvm_readv -1 1\npersonality -1 1\nquery True\n");
}

TEST(Sandbox, WritesOnlyBeneathTheWritableList) {
  Scratch scratch;
  const SpawnSpec spec = full_policy(scratch);
  fs::create_directories(scratch.root() / "elsewhere");
  const Ran ran = run(spec, {"/bin/sh", "-c",
                             "echo a > " + (scratch.root() / "work" / "inside").string() +
                                 " && echo inside-ok; echo b > " +
                                 (scratch.root() / "elsewhere" / "outside").string() +
                                 " 2>/dev/null && echo outside-ok; echo c > /dev/null && echo "
                                 "devnull-ok; true"});
  REQUIRE_LANDLOCK(ran);
  EXPECT_EQ(ran.out, "inside-ok\ndevnull-ok\n");
  EXPECT_TRUE(fs::exists(scratch.root() / "work" / "inside"));
  EXPECT_FALSE(fs::exists(scratch.root() / "elsewhere" / "outside"));
}

// CUDA's driver writes beneath the process's own /proc/<pid> (cuInit fails without it); other
// processes' /proc entries and the rest of /proc stay unwritable.
TEST(Sandbox, OnlyTheWorkersOwnProcEntryIsWritable) {
  Scratch scratch;
  const SpawnSpec spec = full_policy(scratch);
  const Ran ran = run(spec, {"/bin/sh", "-c",
                             "echo kbench-probe > /proc/$$/comm && echo own-ok; "
                             "echo 1 > /proc/$PPID/comm 2>/dev/null && echo parent-ok; "
                             "echo 1 > /proc/sys/kernel/ns_last_pid 2>/dev/null && echo sys-ok; "
                             "true"});
  REQUIRE_LANDLOCK(ran);
  const Protection* filesystem = find(ran.protections, "filesystem");
  EXPECT_EQ(ran.out, "own-ok\n");
  EXPECT_NE(filesystem->detail.find("own /proc/<pid>"), std::string::npos) << filesystem->detail;
}

// Under a wrapper (Nsight Compute) the worker is the wrapper's child, whose /proc/<pid> the
// spawn cannot name: without the wrapper mode CUDA in that child cannot start (error 304).
TEST(Sandbox, AWrappersChildCanWriteItsOwnProcEntryOnlyInWrapperMode) {
  Scratch scratch;
  SpawnSpec spec = full_policy(scratch);
  // "; true" keeps the outer shell from exec'ing the inner one in its own process.
  const std::vector<std::string> argv = {
      "/bin/sh", "-c",
      "/bin/sh -c 'echo kbench-probe > /proc/$$/comm 2>/dev/null && echo "
      "child-ok'; true"};
  const Ran plain = run(spec, argv);
  REQUIRE_LANDLOCK(plain);
  EXPECT_EQ(plain.out, "");
  spec.sandbox.worker_confines_writes = true;
  const Ran wrapped = run(spec, argv);
  EXPECT_EQ(wrapped.out, "child-ok\n");
  const Protection* filesystem = find(wrapped.protections, "filesystem");
  EXPECT_NE(filesystem->detail.find("a second layer the worker adds"), std::string::npos)
      << filesystem->detail;
}

// The second layer that wrapped worker adds itself (kbench-worker's main): writes beneath its
// directories and its own /proc/<pid>, nowhere else.
TEST(Sandbox, AWorkerConfinesItsOwnWrites) {
  if (landlock_abi() <= 0) {
    GTEST_SKIP() << "no Landlock on this kernel";
  }
  Scratch scratch;
  fs::create_directories(scratch.root() / "work");
  fs::create_directories(scratch.root() / "elsewhere");
  const auto writes = [](const fs::path& path) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const bool ok = fd >= 0 && write(fd, "x\n", 2) == 2;
    if (fd >= 0) {
      close(fd);
    }
    return ok;
  };
  const pid_t child = fork();
  if (child == 0) {
    if (!confine_writes({scratch.root() / "work"}).empty()) {
      _exit(100);
    }
    _exit((writes(scratch.root() / "work" / "inside") ? 1 : 0) |
          (writes(scratch.root() / "elsewhere" / "outside") ? 2 : 0) |
          (writes("/proc/self/comm") ? 4 : 0));
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1 | 4) << "1: its directory, 2: elsewhere, 4: own /proc entry";
}

TEST(Sandbox, TheUnreadableDirectoryCannotBeRead) {
  Scratch scratch;
  fs::create_directories(scratch.root() / "reference");
  fs::create_directories(scratch.root() / "inputs");
  std::ofstream(scratch.root() / "reference" / "out") << "secret\n";
  std::ofstream(scratch.root() / "inputs" / "in") << "input\n";
  const SpawnSpec spec = full_policy(scratch);
  const Ran ran = run(spec, {"/bin/sh", "-c",
                             "cat " + (scratch.root() / "inputs" / "in").string() + "; cat " +
                                 (scratch.root() / "reference" / "out").string() +
                                 " 2>/dev/null || echo denied; cat /etc/passwd >/dev/null && "
                                 "echo etc-ok"});
  REQUIRE_LANDLOCK(ran);
  EXPECT_EQ(ran.out, "input\ndenied\netc-ok\n");
}

TEST(Sandbox, NoCoreDumpsAndTheLimitsAreSet) {
  Scratch scratch;
  const SpawnSpec spec = full_policy(scratch);
  const Ran ran = run(spec, {"/bin/sh", "-c", "ulimit -c; ulimit -f; ulimit -t; ulimit -n"});
  // ulimit -f counts 512-byte blocks in POSIX sh, 1024 in bash: both are 1 GiB here.
  EXPECT_TRUE(ran.out == "0\n2097152\n600\n4096\n" || ran.out == "0\n1048576\n600\n4096\n")
      << ran.out;
  for (const char* name : {"core_dumps", "open_files", "file_size", "cpu_time"}) {
    const Protection* p = find(ran.protections, name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_TRUE(p->active) << name << ": " << p->detail;
  }
  const Protection* processes = find(ran.protections, "processes");
  ASSERT_NE(processes, nullptr);
  EXPECT_NE(processes->detail.find("RLIMIT_NPROC"), std::string::npos) << processes->detail;
  if (!processes->active) {
    EXPECT_FALSE(processes->warning.empty());
  }
}

TEST(Sandbox, ReportedProtectionsMatchTheRequest) {
  Scratch scratch;
  const SpawnSpec spec = full_policy(scratch);
  const Ran ran = run(spec, {"/bin/true"});
  EXPECT_EQ(ran.code, 0);
  std::vector<std::string> names;
  for (const auto& p : ran.protections) {
    names.push_back(p.name);
    // Off or degraded is never silent.
    if (!p.active) {
      EXPECT_FALSE(p.warning.empty()) << p.name;
      EXPECT_EQ(p.detail.rfind("off", 0), 0u) << p.name << ": " << p.detail;
    }
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"network", "syscall_filter", "filesystem", "core_dumps",
                                      "open_files", "file_size", "cpu_time", "processes"}));
}

TEST(Sandbox, APlainSpawnReportsOnlyItsLimits) {
  SpawnSpec spec;
  spec.working_directory = "/";
  const Ran ran = run(spec, {"/bin/true"});
  std::vector<std::string> names;
  for (const auto& p : ran.protections) {
    names.push_back(p.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"core_dumps", "open_files"}));
}

TEST(Sandbox, TheResultKeepsAProtectionActiveOnlyIfEveryWorkerHadIt) {
  kbench::EvalResult result;
  kbench::record_protections(result,
                             {{"network", true, "own network namespace", ""},
                              {"processes", false, "off: root", "process limit off: root"}});
  kbench::record_protections(
      result, {{"network", false, "off: ranks of a collective evaluation talk over loopback",
                "network isolation off: ranks of a collective evaluation talk over loopback"},
               {"processes", false, "off: root", "process limit off: root"}});
  ASSERT_EQ(result.sandbox.size(), 2u);
  EXPECT_EQ(result.sandbox[0].protection, "network");
  EXPECT_FALSE(result.sandbox[0].active);
  EXPECT_EQ(result.sandbox[0].detail, "off: ranks of a collective evaluation talk over loopback");
  EXPECT_FALSE(result.sandbox[1].active);
  EXPECT_EQ(result.warnings,
            (std::vector<std::string>{
                "process limit off: root",
                "network isolation off: ranks of a collective evaluation talk over loopback"}));
  const auto json = kbench::to_json(result);
  ASSERT_EQ(json["sandbox"].size(), 2u);
  EXPECT_EQ(json["sandbox"][0]["protection"], "network");
  EXPECT_EQ(json["sandbox"][0]["active"], false);
  EXPECT_TRUE(json["sandbox"][1].contains("detail"));
}

TEST(Sandbox, KbenchSandboxTurnsOffAllOrTheNamedProtections) {
  EXPECT_TRUE(kbench::protections_turned_off(nullptr).empty());
  EXPECT_TRUE(kbench::protections_turned_off("on").empty());
  EXPECT_EQ(kbench::protections_turned_off("off").size(), 3U);
  const auto some = kbench::protections_turned_off("off:filesystem,network");
  EXPECT_EQ(some, (std::set<std::string>{"filesystem", "network"}));
  try {
    kbench::protections_turned_off("off:landlock");
    FAIL() << "an unknown protection must be an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("unknown protection 'landlock'"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("syscall_filter"), std::string::npos);
  }
  EXPECT_THROW(kbench::protections_turned_off("no"), std::runtime_error);
}
