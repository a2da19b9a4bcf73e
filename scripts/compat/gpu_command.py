"""The commands that carry the suites to the GPU machine and run the report there: printed after
a CPU run, and written into docs/compatibility.md."""

PACK = """mkdir -p /tmp/suites && \\
git --git-dir=KERNELBENCH_GIT archive --prefix=kb/ HEAD KernelBench src/kernelbench | tar -x -C /tmp/suites && \\
git --git-dir=POPCORNBENCH_GIT archive --prefix=pb/ HEAD KernelBench src/kernelbench | tar -x -C /tmp/suites && \\
tar -czf build/compat-suites.tar.gz -C /tmp/suites kb pb && \\
scripts/gpu-deps.sh && \\
scripts/compatibility-report.sh /tmp/suites/kb /tmp/suites/pb --skip checks --skip candidates --skip pri \\
  --out build/compat-gpu/compat --report /tmp/probe-only.md
# The last step probes every problem here (about 2.4 s each; a probe loads on torch's meta
# device, so its answer is the same on any machine): the GPU's time goes to the checks."""

RUN = ("S=$SECONDS; export KBENCH_BUILD=build-gpu KBENCH_DEPS_DIR=$PWD/.device-carry/deps; "
       "(test -x build-gpu/kbench || scripts/setup.sh > $OUT/build.log 2>&1); "
       "mkdir -p /tmp/suites && tar -xzf build/compat-suites.tar.gz -C /tmp/suites && "
       "mkdir -p build-gpu/compat && cp -rn build/compat-gpu/compat/. build-gpu/compat/; "
       "timeout $((560-SECONDS+S)) scripts/compatibility-report.sh /tmp/suites/kb /tmp/suites/pb "
       "--device cuda --jobs 6 --large-jobs 2 --budget $((440-SECONDS+S)) --trials 5 "
       "--out build-gpu/compat --report $OUT/compatibility.md 2> $OUT/compat.log; "
       "tar -czf $OUT/compat-gpu.tgz -C build-gpu compat")  # one file: $OUT returns at most 8


def text() -> str:
    return (f"Here (the CPU machine), once:\n\n```\n{PACK}\n```\n\n"
            "On the H200 (device tool, `carry: [\"build/compat-suites.tar.gz\", \"build/compat-gpu\", \".device-carry\"]`; "
            "repeat until the summary has no `owed` row, unpacking the returned `compat-gpu.tgz` "
            "into build/compat-gpu here between calls (`tar -xzf compat-gpu.tgz -C build/compat-gpu`), "
            "so that each call resumes; the deadlines count from the call's start, so a call "
            "that builds first still returns its results inside the device's 600 s; then write "
            "docs/compatibility.md here from what came back: `scripts/compatibility-report.sh "
            "/tmp/suites/kb /tmp/suites/pb --device cuda --report-only --trials 5 --out "
            "build/compat-gpu/compat`):\n\n"
            f"```\n{RUN}\n```")
