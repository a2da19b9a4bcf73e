// kbench_seed_store: writes the seeded store of tests/support/seeded_store.hpp to a file, for
// the tests and benches that drive the dashboard from outside the process (the browser tests,
// bench/web), and prints what it seeded as JSON on stdout.
// Usage: kbench_seed_store DB PROBLEMS_DIR [--long-turns N] [--extra-evaluations N]
//        [--extra-runs N]
#include "seeded_store.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s DB PROBLEMS_DIR [--long-turns N] [--extra-evaluations N] "
                 "[--extra-runs N]\n",
                 argv[0]);
    return 2;
  }
  int long_turns = 0, extra_evaluations = 0, extra_runs = 0;
  for (int i = 3; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a number\n", argv[0], flag.c_str());
      return 2;
    }
    const int value = std::stoi(argv[i + 1]);
    if (flag == "--long-turns") {
      long_turns = value;
    } else if (flag == "--extra-evaluations") {
      extra_evaluations = value;
    } else if (flag == "--extra-runs") {
      extra_runs = value;
    } else {
      std::fprintf(stderr, "%s: unknown option %s\n", argv[0], flag.c_str());
      return 2;
    }
  }
  kbench::store::Store store(argv[1]);
  const auto seeded =
      kbench::testing::seed_store(store, argv[2], long_turns, extra_evaluations, extra_runs);
  std::cout << nlohmann::json{{"run_ids", seeded.run_ids},
                              {"hostile_run", seeded.hostile_run},
                              {"long_run", seeded.long_run},
                              {"running_run", seeded.running_run},
                              {"excluded_run", seeded.excluded_run},
                              {"evaluation_id", seeded.evaluation_id},
                              {"problem_sha256", seeded.problem_sha256},
                              {"hostile_text", kbench::testing::kHostile}}
                   .dump(2)
            << "\n";
  return 0;
}
