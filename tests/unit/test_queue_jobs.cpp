// Covers the work queue's pure parts (src/queue/): the --queue URL, and jobs: self-contained
// (sources inside), one id for equal work, written back on a worker under names it chooses,
// with the worker's device, and refused with the field named when malformed.
#include "queue/jobs.hpp"
#include "queue/redis_client.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace kbench::queue {
namespace {
namespace fs = std::filesystem;

TEST(QueueUrl, HostPortAndStream) {
  const auto full = parse_queue_url("redis://queue-host:6380/evals");
  EXPECT_EQ(full.host, "queue-host");
  EXPECT_EQ(full.port, 6380);
  EXPECT_EQ(full.stream, "evals");
  const auto bare = parse_queue_url("redis://127.0.0.1");
  EXPECT_EQ(bare.port, 6379);
  EXPECT_EQ(bare.stream, "kbench");
  for (const char* bad : {"http://h:1/s", "redis://", "redis://h:0", "redis://h:1/bad name"}) {
    EXPECT_THROW(parse_queue_url(bad), std::invalid_argument) << bad;
  }
}

class QueueJobs : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("kbench-queue-jobs-" + std::to_string(::getpid()));
    fs::create_directories(m_dir);
    std::ofstream(m_dir / "problem.py")
        << "import torch\nclass Model(torch.nn.Module):\n    pass\n";
    std::ofstream(m_dir / "a.py") << "class ModelNew: pass\n";
    std::ofstream(m_dir / "a_copy.py") << "class ModelNew: pass\n";
    std::ofstream(m_dir / "b.py") << "class ModelNew: pass  # b\n";
  }
  void TearDown() override { fs::remove_all(m_dir); }
  EvalOptions run(const std::string& candidate) {
    EvalOptions o;
    o.problem = m_dir / "problem.py";
    o.candidate = m_dir / candidate;
    o.device = "auto";
    return o;
  }
  fs::path m_dir;
};

TEST_F(QueueJobs, EqualWorkHasOneIdAndTheSourcesTravel) {
  const Job a = job_of(run("a.py")), copy = job_of(run("a_copy.py")), b = job_of(run("b.py"));
  EXPECT_EQ(a.id, copy.id) << "the same contents under another name";
  EXPECT_NE(a.id, b.id);
  auto more_trials = run("a.py");
  more_trials.trials = 9;
  EXPECT_NE(job_of(more_trials).id, a.id);
  EXPECT_EQ(a.body["candidate"]["source"], "class ModelNew: pass\n");
  EXPECT_FALSE(a.body["options"].contains("problem")) << "paths do not travel";
  EXPECT_THROW(job_of(run("missing.py")), std::runtime_error);
}

TEST_F(QueueJobs, AWorkerWritesTheSourcesWhereItChoosesAndUsesItsDevice) {
  nlohmann::json body = job_of(run("a.py")).body;
  body["candidate"]["filename"] = "../../etc/evil.py"; // a name, never a path
  EvalOptions worker;
  worker.device = "cpu";
  worker.python = "/opt/python";
  const EvalOptions got = run_of(body, worker, m_dir / "sources");
  EXPECT_EQ(got.device, "cpu");
  EXPECT_EQ(got.python, "/opt/python");
  EXPECT_EQ(got.candidate.filename(), "candidate.py");
  EXPECT_EQ(got.candidate.parent_path().parent_path(), m_dir / "sources");
  EXPECT_TRUE(fs::exists(got.problem));

  body["options"]["device"] = "cuda";
  try {
    run_of(body, worker, m_dir / "sources");
    FAIL() << "a CPU worker took a CUDA job";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("--device cuda"), std::string::npos) << error.what();
  }
  body["options"]["trials"] = "five";
  try {
    run_of(body, worker, m_dir / "sources");
    FAIL();
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("job.options.trials"), std::string::npos)
        << error.what();
  }
  body.erase("candidate");
  EXPECT_THROW(run_of(body, worker, m_dir / "sources"), std::runtime_error);
}

} // namespace
} // namespace kbench::queue
