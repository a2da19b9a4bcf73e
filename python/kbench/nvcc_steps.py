"""One `nvcc -c SRC.cu -o OBJ`, run as nvcc's own steps with its two front ends side by side.

nvcc runs its steps one after the other: the host preprocessor and `cudafe++` (which writes the
host translation unit and the module id), then the device preprocessor, `cicc`, `ptxas` and
`fatbinary` (which read the module id), then the host compiler on `cudafe++`'s output. The two
front ends each parse the whole unit, torch's headers included, so each is about a third of a
load_inline CUDA unit's build (docs/architecture.md, "load_inline build time"), and only the
module id ties the device chain to `cudafe++`. So this module asks nvcc for its steps
(`--dryrun`, in a private TMPDIR), writes a fresh module id first, runs the host front end and
the device chain at once, and then the host compile: the same programs with the same arguments
on the same inputs (less `--gen_module_id_file`, whose file is already there), one front end's
time less on the wall.

Anything outside the one shape it knows (a single `-c` of a `.cu`, nvcc's temporary file names,
`cudafe++` the only writer of the module id and `cicc` its only other reader, no nvcc-internal
pseudo-step) is run as one nvcc command, as before. So are `--dryrun`, `--keep`, `--time` and
dependency options other than `-MD`/`-MMD`, `-MF` and `-MT`, which are taken off and given to
the two preprocessors (their dependency files merged), since nvcc's own dependency filter is not
a command it can show.

Standard library only: it runs as torch's `$nvcc` inside the sandboxed workers
(python/kbench/light_nvcc.py). KBENCH_NVCC_STEPS=off runs nvcc as one command.
"""

import hashlib
import os
import sys
import random
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import host_pch  # noqa: E402  (beside this file: run as a script, light_nvcc.py has no package)

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Options that change what nvcc runs or writes beside the object: such a build runs as it is.
_AS_ONE = {"--dryrun", "-dryrun", "--keep", "-keep", "--keep-dir", "-keep-dir", "--time", "-time",
           "--verbose", "-v", "--save-temps", "-save-temps", "-MP", "--generate-dependency-targets",
           "-M", "-MM", "--generate-dependencies", "--generate-nonsystem-dependencies"}
_DEPENDENCY_FLAGS = {"-MD": "-MD", "--generate-dependencies-with-compile": "-MD",
                     "-MMD": "-MMD", "--generate-nonsystem-dependencies-with-compile": "-MMD"}
_DEPENDENCY_VALUES = {"-MF": "file", "--dependency-output": "file",
                      "-MT": "target", "--dependency-target-name": "target"}


@dataclass
class Step:
    command: str  # a shell command, as nvcc --dryrun prints it
    seconds: float = 0.0
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""


@dataclass
class Plan:
    environment: dict    # nvcc's variables (PATH, CICC_PATH, ...) for its steps
    host: list           # host preprocessor, cudafe++
    device: list         # device preprocessor, cicc, ptxas, fatbinary, ...
    compile: Step        # the host compiler on cudafe++'s output
    module_id: Path
    source_name: str
    marker_name: str     # the source's name in cudafe++'s line markers
    args: list           # nvcc's arguments, for the host header's conditions
    dependencies: dict = field(default_factory=dict)  # mode, file, target; empty: none asked


@dataclass
class Outcome:
    returncode: int
    steps: list          # every step that ran, host chain first
    summary: str         # for OBJECT.kbench-header


def _split_dependency_options(args):
    """(args without the dependency options, {mode, file, target}) or None when an option
    outside those is present."""
    rest, deps, i = [], {}, 0
    while i < len(args):
        arg = args[i]
        if arg in _AS_ONE:
            return None
        if arg in _DEPENDENCY_FLAGS:
            deps["mode"] = _DEPENDENCY_FLAGS[arg]
        elif arg in _DEPENDENCY_VALUES and i + 1 < len(args):
            deps[_DEPENDENCY_VALUES[arg]] = args[i + 1]
            i += 1
        elif arg.split("=", 1)[0] in _DEPENDENCY_VALUES and "=" in arg:
            name, value = arg.split("=", 1)
            deps[_DEPENDENCY_VALUES[name]] = value
        else:
            rest.append(arg)
        i += 1
    if deps and ("mode" not in deps or "file" not in deps):
        return None  # -MF without -MD: nvcc's meaning, not one to guess
    return rest, deps


def _tokens(command):
    try:
        return shlex.split(command)
    except ValueError:
        return None


def _program(tokens):
    return os.path.basename(tokens[0]) if tokens else ""


def _value_after(tokens, flag):
    try:
        return tokens[tokens.index(flag) + 1]
    except (ValueError, IndexError):
        return None


def plan(nvcc, args, tmpdir):
    """The steps of `nvcc ARGS` from its --dryrun with TMPDIR=tmpdir, arranged in two chains, or
    None when the build is not of the shape described above."""
    split = _split_dependency_options(args)
    if split is None:
        return None
    args, deps = split
    try:
        source = args[args.index("-c") + 1]
        obj = args[args.index("-o") + 1]
    except (ValueError, IndexError):
        return None
    if not source.endswith(".cu") or args.count("-c") != 1:
        return None
    try:
        dry = subprocess.run([nvcc, "--dryrun", *args], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "TMPDIR": str(tmpdir)})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if dry.returncode != 0:
        return None
    lines = [line[3:] for line in (dry.stdout + dry.stderr).splitlines() if line.startswith("#$ ")]
    assignments = [line for line in lines if _ASSIGNMENT.match(line)]
    commands = [line for line in lines if not _ASSIGNMENT.match(line)]
    parsed = [_tokens(c) for c in commands]
    if not commands or any(t is None or not t for t in parsed):
        return None  # e.g. "-- Filter Dependencies --", or quoting this module cannot read
    temp = str(tmpdir)
    mentions = [{t for t in tokens if t.startswith(temp)} for tokens in parsed]
    programs = [_program(t) for t in parsed]
    try:
        front = programs.index("cudafe++")
    except ValueError:
        return None
    module_id = _value_after(parsed[front], "--module_id_file_name")
    host_pre = [i for i, t in enumerate(parsed) if "-E" in t and (_value_after(t, "-o") or "").endswith(".cpp4.ii")]
    last = parsed[-1]
    if (module_id is None or "--gen_module_id_file" not in parsed[front] or len(host_pre) != 1
            or host_pre[0] > front or "-c" not in last or _value_after(last, "-o") != obj
            or not (_value_after(last, "-x") == "c++" and any(t.endswith(".cudafe1.cpp") for t in last))):
        return None
    host = [host_pre[0], front]
    device = [i for i in range(len(commands) - 1) if i not in host]
    readers = [i for i, m in enumerate(mentions) if module_id in m]
    if any(programs[i] not in ("cudafe++", "cicc") for i in readers):
        return None
    # The chains share no file but the module id (cudafe++'s relative stub name is only the
    # #include the host compile resolves beside cudafe++'s output, where cicc writes it).
    host_files = set().union(*(mentions[i] for i in host)) - {module_id}
    device_files = set().union(*(mentions[i] for i in device)) - {module_id}
    if host_files & device_files or not module_id.startswith(temp):
        return None
    front_command = commands[front].replace(" --gen_module_id_file ", " ", 1)
    if front_command == commands[front]:
        return None
    commands[front] = front_command
    if deps:
        preprocessors = [i for i, t in enumerate(parsed) if "-E" in t and programs[i] == programs[host_pre[0]]]
        for n, i in enumerate(preprocessors):
            commands[i] += f" {deps['mode']} -MF {shlex.quote(f'{temp}/kbench-deps-{n}.d')} -MT {shlex.quote(obj)}"
    # nvcc's rm of a file it may not have made ignores the absence, as nvcc does.
    commands = [("rm -f " + c[3:]) if programs[i] == "rm" else c for i, c in enumerate(commands)]
    return Plan(environment=_environment(assignments), host=[Step(commands[i]) for i in host],
                device=[Step(commands[i]) for i in device], compile=Step(commands[-1]),
                module_id=Path(module_id), source_name=os.path.basename(source),
                marker_name=_value_after(parsed[front], "--orig_src_file_name") or os.path.basename(source),
                args=list(args),
                dependencies=dict(deps, target=deps.get("target", obj)) if deps else {})


def _environment(assignments):
    """os.environ with nvcc's variables as it sets them for its steps (`NAME=VALUE`, VALUE in
    shell quoting; the commands already hold them expanded, but for $CICC_PATH)."""
    environment = dict(os.environ)
    for line in assignments:
        name, _, value = line.partition("=")
        try:
            environment[name] = " ".join(shlex.split(value))
        except ValueError:
            environment[name] = value
    return environment


def write_module_id(plan_, source):
    """A module id as cudafe++ writes one (`_HASH_LEN_NAME_HASH`), unique to this compile: it
    names the unit's anonymous namespaces and its fatbinary's registration."""
    seed = f"{os.path.realpath(source)}\0{time.time_ns()}\0{os.getpid()}\0{random.random()}"
    digest = hashlib.sha256(seed.encode()).hexdigest()
    name = re.sub(r"[^A-Za-z0-9]", "_", plan_.source_name)
    module_id = f"_{digest[:8]}_{len(plan_.source_name)}_{name}_{digest[8:16]}"
    plan_.module_id.write_text(module_id)
    return module_id


class _Chain(threading.Thread):
    """Runs its steps one after another until one fails or another chain's step failed. The
    steps stay in the worker's process group (a deadline's kill reaches them) and each replaces
    its shell (`exec`), so killing the step's process stops it."""

    def __init__(self, environment, steps, failures):
        super().__init__(daemon=True)
        self.environment, self.steps, self.failures = environment, steps, failures
        self._process = None
        self._lock = threading.Lock()

    def run(self):
        for step in self.steps:
            with self._lock:
                if self.failures:
                    return
                start = time.perf_counter()
                self._process = subprocess.Popen(["bash", "-c", "exec " + step.command],
                                                 env=self.environment, stdout=subprocess.PIPE,
                                                 stderr=subprocess.PIPE, text=True, errors="replace")
            step.stdout, step.stderr = self._process.communicate()
            step.returncode = self._process.returncode
            step.seconds = time.perf_counter() - start
            if step.returncode != 0:
                with self._lock:
                    self.failures.append(step)  # list.append is atomic: the first one stays first
                return

    def kill(self):
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                try:
                    self._process.kill()
                except OSError:
                    pass


def _dependency_paths(text):
    """The prerequisites of a make rule as gcc writes one (backslash-newlines, escaped spaces)."""
    body = text.replace("\\\n", " ")
    _, _, after = body.partition(": ")
    paths, current, i = [], "", 0
    while i < len(after):
        c = after[i]
        if c == "\\" and i + 1 < len(after) and after[i + 1] == " ":
            current += " "
            i += 2
            continue
        if c.isspace():
            if current:
                paths.append(current)
            current = ""
        else:
            current += c
        i += 1
    if current:
        paths.append(current)
    return paths


def _merge_dependencies(plan_, tmpdir):
    paths = []
    for part in sorted(Path(tmpdir).glob("kbench-deps-*.d")):
        for path in _dependency_paths(part.read_text(errors="surrogateescape")):
            if path not in paths:
                paths.append(path)
    quoted = [p.replace(" ", "\\ ") for p in paths]
    text = plan_.dependencies["target"].replace(" ", "\\ ") + " : " + " \\\n    ".join(quoted) + "\n"
    Path(plan_.dependencies["file"]).write_text(text, errors="surrogateescape")


def run_plan(plan_, source, tmpdir):
    module_id = write_module_id(plan_, source)
    failures = []
    host = _Chain(plan_.environment, plan_.host, failures)
    device = _Chain(plan_.environment, plan_.device, failures)
    host.start()
    device.start()
    while host.is_alive() or device.is_alive():
        if failures:
            host.kill()
            device.kill()
        host.join(0.02)
        device.join(0.02)
    if failures:
        # nvcc stops at its first failing step and shows what the steps before it printed. The
        # step that failed first is the one reported; a step killed because of it shows nothing.
        failed = failures[0]
        done = [s for s in plan_.host + plan_.device if s.seconds and (s.returncode == 0 or s is failed)]
        return Outcome(failed.returncode if failed.returncode > 0 else 1, done, "")
    ran = plan_.host + plan_.device
    header, undo = host_pch.use_or_request(_tokens(plan_.compile.command), module_id, plan_.marker_name,
                                           os.environ.get("KBENCH_HOST_PCH_DIR", ""), plan_.args,
                                           plan_.environment.get("PATH"))
    _Chain(plan_.environment, [plan_.compile], failures).run()
    if failures and header:
        # Built against the header it failed: what cudafe++ wrote is compiled as it is.
        undo()
        failures.clear()
        header = ""
        _Chain(plan_.environment, [plan_.compile], failures).run()
    ran.append(plan_.compile)
    if failures:
        return Outcome(failures[0].returncode if failures[0].returncode > 0 else 1, ran, "")
    if plan_.dependencies:
        _merge_dependencies(plan_, tmpdir)
    host_s = sum(s.seconds for s in plan_.host)
    device_s = sum(s.seconds for s in plan_.device)
    summary = (f"nvcc's front ends side by side (host {host_s:.1f} s, device {device_s:.1f} s, "
               f"then the host compile {plan_.compile.seconds:.1f} s" + (f", {header})" if header else ")"))
    return Outcome(0, ran, summary)


def compile_unit(nvcc, args):
    """Builds as `nvcc ARGS` would. Returns (returncode, output, summary): output is what the
    steps printed (stdout and stderr, in order), summary a note for OBJECT.kbench-header, ""
    when nvcc ran as one command."""
    if os.environ.get("KBENCH_NVCC_STEPS", "on") == "off":
        return _as_one(nvcc, args)
    tmpdir = tempfile.mkdtemp(prefix="kbench-nvcc-")
    try:
        try:
            source = args[args.index("-c") + 1]
        except (ValueError, IndexError):
            return _as_one(nvcc, args)
        planned = plan(nvcc, args, tmpdir)
        if planned is None:
            return _as_one(nvcc, args)
        outcome = run_plan(planned, source, tmpdir)
        output = "".join(s.stdout + s.stderr for s in outcome.steps)
        if outcome.returncode != 0 and not output.strip():
            # A step that failed without a word (a signal, a missing file) may be this module's
            # doing rather than the source's: nvcc as one command says what it says.
            return _as_one(nvcc, args)
        return outcome.returncode, output, outcome.summary
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _as_one(nvcc, args):
    done = subprocess.run([nvcc, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace")
    return done.returncode, done.stdout, ""
