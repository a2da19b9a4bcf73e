// The user a root kbench's workers run as (src/sandbox/worker_user.cpp), the hand-over of the
// directories kbench made for them (hand_over.cpp) and the switch in the child (child_setup.cpp):
// KBENCH_WORKER_USER's values and their errors, then, as root only, spawns that must come out
// as nobody with the process limit in force, and a spawn that names the directory it cannot
// enter.
#include "counters/ncu_metrics.hpp"
#include "sandbox/environment.hpp"
#include "sandbox/hand_over.hpp"
#include "sandbox/process.hpp"
#include "sandbox/protections.hpp"
#include "sandbox/worker_user.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <pwd.h>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace kbench::sandbox;
namespace fs = std::filesystem;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                                 \
      << "expected to find: " << (needle) << "\nin: " << (haystack)

#define REQUIRE_ROOT()                                                                             \
  do {                                                                                             \
    if (geteuid() != 0) {                                                                          \
      GTEST_SKIP() << "switching users needs root (this test runs as uid " << geteuid() << ")";    \
    }                                                                                              \
  } while (false)

// The message choose_worker_user throws for `setting` (as root), or "" when it does not throw.
std::string error_for(const char* setting) {
  try {
    choose_worker_user(setting, 0);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "";
}

uid_t nobody_uid() {
  const passwd* entry = getpwnam("nobody");
  return entry ? entry->pw_uid : kNobodyId;
}

class Scratch {
public:
  Scratch() {
    char pattern[] = "/tmp/kbench-user-test-XXXXXX";
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

uid_t owner_of(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(lstat(path.c_str(), &info), 0) << path;
  return info.st_uid;
}

struct Ran {
  int code = -1;
  std::string out;
  std::vector<Protection> protections;
};

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

const Protection* find(const std::vector<Protection>& list, const std::string& name) {
  for (const auto& p : list) {
    if (p.name == name) {
      return &p;
    }
  }
  return nullptr;
}

// A spawn as nobody in `scratch`/work, with the whole sandbox a worker gets.
SpawnSpec as_nobody(const Scratch& scratch) {
  SpawnSpec spec;
  spec.working_directory = scratch.root() / "work";
  fs::create_directories(spec.working_directory);
  spec.sandbox.isolate_network = true;
  spec.sandbox.filter_syscalls = true;
  spec.sandbox.restrict_filesystem = true;
  spec.sandbox.writable = {spec.working_directory, "/dev"};
  spec.sandbox.user = choose_worker_user(nullptr, 0).user;
  spec.sandbox.handed_over = {spec.working_directory};
  spec.sandbox.handed_over_beneath = {scratch.root()};
  spec.limits.processes_above_current = 64;
  return spec;
}

} // namespace

TEST(WorkerUser, AKbenchThatIsNotRootSwitchesToNoOneAndReadsNothing) {
  const UserChoice choice = choose_worker_user("no-such-user-anywhere", 1000);
  EXPECT_FALSE(choice.user);
  EXPECT_EQ(choice.stays_root, "");
}

TEST(WorkerUser, RootDefaultsToNobody) {
  for (const char* setting : {static_cast<const char*>(nullptr), "", "nobody"}) {
    const UserChoice choice = choose_worker_user(setting, 0);
    ASSERT_TRUE(choice.user) << (setting ? setting : "(unset)");
    EXPECT_EQ(choice.user->uid, nobody_uid());
    EXPECT_NE(choice.user->gid, 0U);
    EXPECT_EQ(choice.user->name, "nobody");
    EXPECT_EQ(choice.stays_root, "");
  }
}

TEST(WorkerUser, RootStaysRootOnlyWhenAskedAndSaysWhy) {
  for (const char* setting : {"root", "0", "0:0"}) {
    const UserChoice choice = choose_worker_user(setting, 0);
    EXPECT_FALSE(choice.user) << setting;
    EXPECT_EQ(choice.stays_root,
              std::string("KBENCH_WORKER_USER=") + setting + " keeps workers as root");
  }
}

TEST(WorkerUser, ANumberWithoutAnEntryIsItsOwnGroupAndAGroupCanBeNamed) {
  if (getpwuid(54321) != nullptr) {
    GTEST_SKIP() << "uid 54321 has a passwd entry here";
  }
  const auto numeric = choose_worker_user("54321", 0).user;
  ASSERT_TRUE(numeric);
  EXPECT_EQ(numeric->uid, 54321U);
  EXPECT_EQ(numeric->gid, 54321U);
  EXPECT_EQ(numeric->name, "54321");
  EXPECT_EQ(numeric->describe(), "54321 (uid 54321, gid 54321)");
  const auto grouped = choose_worker_user("nobody:4242", 0).user;
  ASSERT_TRUE(grouped);
  EXPECT_EQ(grouped->uid, nobody_uid());
  EXPECT_EQ(grouped->gid, 4242U);
}

TEST(WorkerUser, UnknownNamesAndRootsPowersUnderAnotherNameAreErrors) {
  EXPECT_EQ(error_for("no-such-user-anywhere"),
            "KBENCH_WORKER_USER=no-such-user-anywhere: no user named 'no-such-user-anywhere' on "
            "this system; use a user name or uid, optionally with :GROUP (a name or gid), or root "
            "to keep workers as root");
  EXPECT_CONTAINS(error_for("nobody:no-such-group-anywhere"),
                  "no group named 'no-such-group-anywhere'");
  EXPECT_CONTAINS(error_for("0:4242"), "'0' is uid 0, which is root");
  EXPECT_CONTAINS(error_for("nobody:0"), "its group is gid 0");
  EXPECT_EQ(error_for("nobody"), "");
}

TEST(WorkerUser, CountersNeedAnAdministratorOnlyWhereTheDriverSaysSo) {
  EXPECT_FALSE(kbench::counters::counters_need_admin("EnableMSI: 1\nRmProfilingAdminOnly: 0\n"));
  EXPECT_FALSE(kbench::counters::counters_need_admin("EnableMSI: 1\n"));
  const auto admin = kbench::counters::counters_need_admin("RmProfilingAdminOnly: 1\n");
  ASSERT_TRUE(admin);
  EXPECT_CONTAINS(*admin, "RmProfilingAdminOnly: 1 in /proc/driver/nvidia/params");
  EXPECT_CONTAINS(*admin, "NVreg_RestrictProfilingToAdminUsers=0");
}

TEST(WorkerUser, TheUserProtectionSaysWhoOrWhyRoot) {
  SpawnSpec spec;
  spec.argv = {"/bin/true"};
  spec.limits.open_files.reset();
  spec.limits.core_dumps = true;
  spec.sandbox.user = WorkerUser{65534, 65534, "nobody"};
  StepErrors steps{};
  steps.fill(kNotTried);
  steps[kStepUser] = 0;
  auto list = protections_from(spec, Prepared{}, steps);
  ASSERT_EQ(list.size(), 1U);
  EXPECT_EQ(list[0].name, "user");
  EXPECT_TRUE(list[0].active);
  EXPECT_EQ(list[0].detail,
            "nobody (uid 65534, gid 65534), no supplementary groups (kbench runs as root)");
  EXPECT_EQ(list[0].warning, "");

  steps[kStepUser] = kNotTried;
  list = protections_from(spec, Prepared{}, steps);
  EXPECT_FALSE(list[0].active);
  EXPECT_EQ(list[0].warning, "worker user off: the switch to nobody (uid 65534, gid 65534) was "
                             "never reported; the worker may run as root");

  spec.sandbox.user.reset();
  spec.sandbox.stays_root = "KBENCH_WORKER_USER=root keeps workers as root";
  list = protections_from(spec, Prepared{}, steps);
  ASSERT_EQ(list.size(), 1U);
  EXPECT_FALSE(list[0].active);
  EXPECT_EQ(list[0].detail, "off: root (KBENCH_WORKER_USER=root keeps workers as root)");
  EXPECT_EQ(list[0].warning, "worker user off: the worker runs as root (KBENCH_WORKER_USER=root "
                             "keeps workers as root), so the process limit does not hold");

  // A kbench that is not root asks for neither: nothing is reported.
  spec.sandbox.stays_root.clear();
  EXPECT_TRUE(protections_from(spec, Prepared{}, steps).empty());
}

TEST(WorkerUser, HandOverGivesKbenchsDirectoriesAndNeverAFileOrALink) {
  REQUIRE_ROOT();
  Scratch scratch;
  const fs::path top = scratch.root();
  fs::create_directories(top / "a" / "deep");
  fs::create_directories(top / "elsewhere");
  std::ofstream(top / "a" / "file") << "kbench's\n";
  fs::create_directory_symlink(top / "elsewhere", top / "a" / "link");
  const uid_t uid = 54321;
  const gid_t gid = 54321;
  ASSERT_EQ(hand_over(top / "a", false, uid, gid), "");
  EXPECT_EQ(owner_of(top / "a"), uid);
  EXPECT_EQ(owner_of(top / "a" / "deep"), uid);
  EXPECT_EQ(owner_of(top / "a" / "file"), 0U);
  EXPECT_EQ(owner_of(top / "a" / "link"), 0U);
  EXPECT_EQ(owner_of(top / "elsewhere"), 0U); // the link's target is not followed

  // The scratch root stays kbench's, searchable but not listable; what it holds is handed over.
  ASSERT_EQ(hand_over(top, true, uid, gid), "");
  struct stat info {};
  ASSERT_EQ(stat(top.c_str(), &info), 0);
  EXPECT_EQ(info.st_uid, 0U);
  EXPECT_EQ(info.st_mode & 07777, 0711U);
  EXPECT_EQ(owner_of(top / "elsewhere"), uid);

  // A directory the worker's user owns is not walked: what it holds is the worker's business.
  fs::create_directories(top / "made-later");
  ASSERT_EQ(chown((top / "a").c_str(), uid, gid), 0);
  fs::create_directories(top / "a" / "root-inside-theirs");
  ASSERT_EQ(hand_over(top, true, uid, gid), "");
  EXPECT_EQ(owner_of(top / "made-later"), uid);
  EXPECT_EQ(owner_of(top / "a" / "root-inside-theirs"), 0U);
}

TEST(WorkerUser, ARootSpawnRunsAsNobodyWithoutGroupsAndUnderTheProcessLimit) {
  REQUIRE_ROOT();
  if (access("/usr/bin/python3", X_OK) != 0) {
    GTEST_SKIP() << "no /usr/bin/python3";
  }
  Scratch scratch;
  const SpawnSpec spec = as_nobody(scratch);
  // Threads count against RLIMIT_NPROC: 64 above nobody's tasks, so 500 cannot all start.
  const Ran ran = run(spec, {"/usr/bin/python3", "-I", "-c", R"(
import os, resource, threading
print(os.getuid(), os.getgid(), os.getgroups(), resource.getrlimit(resource.RLIMIT_NPROC)[0])
threading.stack_size(65536)
event, threads, stop = threading.Event(), [], "none"
try:
    for _ in range(500):
        threads.append(threading.Thread(target=event.wait))
        threads[-1].start()
except RuntimeError as error:
    threads.pop()
    stop = str(error)
event.set()
for t in threads:
    t.join()
print(len(threads), stop)
open("work-ok", "w").write("written by the worker")
print("wrote")
)"});
  const auto& user = *spec.sandbox.user;
  const Protection* processes = find(ran.protections, "processes");
  ASSERT_NE(processes, nullptr);
  EXPECT_TRUE(processes->active) << processes->detail;
  EXPECT_CONTAINS(processes->detail, "tasks of uid " + std::to_string(user.uid));
  const std::string limit =
      processes->detail.substr(13, processes->detail.find(' ', 13) - 13); // "RLIMIT_NPROC N"
  EXPECT_CONTAINS(ran.out, std::to_string(user.uid) + " " + std::to_string(user.gid) + " [] " +
                               limit + "\n");
  EXPECT_CONTAINS(ran.out, "can't start new thread");
  EXPECT_CONTAINS(ran.out, "wrote");
  EXPECT_EQ(owner_of(spec.working_directory / "work-ok"), user.uid);
  const Protection* who = find(ran.protections, "user");
  ASSERT_NE(who, nullptr);
  EXPECT_TRUE(who->active);
  const Protection* network = find(ran.protections, "network");
  ASSERT_NE(network, nullptr);
  if (network->active) {
    EXPECT_CONTAINS(network->detail, "loopback up"); // brought up before the switch
  }
}

TEST(WorkerUser, ARootSpawnThatCannotReachAPathNamesTheDirectoryAndWhatToDo) {
  REQUIRE_ROOT();
  Scratch scratch;
  SpawnSpec spec = as_nobody(scratch);
  const fs::path closed = scratch.root() / "closed";
  fs::create_directories(closed / "inner");
  std::ofstream(closed / "inner" / "problem.py") << "\n";
  spec.sandbox.must_reach.push_back({closed / "inner" / "problem.py", R_OK, "the problem"});
  spec.argv = {"/bin/true"};
  spec.environment = to_envp(worker_environment({}));
  // A private directory of root's, as /root is (0700): nothing hands it over.
  spec.sandbox.handed_over_beneath.clear();
  ASSERT_EQ(chmod(closed.c_str(), 0700), 0);
  ASSERT_EQ(chmod(scratch.root().c_str(), 0711), 0);
  std::string message;
  try {
    Process::spawn(spec);
  } catch (const SpawnError& error) {
    message = error.what();
  }
  EXPECT_CONTAINS(message, "cannot start /bin/true as nobody (uid ");
  EXPECT_CONTAINS(message, "the problem " + (closed / "inner" / "problem.py").string() +
                               ": the directory " + closed.string() +
                               " is not searchable by it (Permission denied)");
  EXPECT_CONTAINS(message, "KBENCH_WORKER_USER");
  EXPECT_CONTAINS(message, "chmod o+x");
}
