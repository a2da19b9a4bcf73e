"""Builds a load_inline CUDA unit as cuda_split.py's two units, joined into the one object.

`nvcc ARGS -c SRC.cu -o OBJ` becomes, side by side:

- the device unit (`<build>/kbench-light/<name>.kernels.cu`) by nvcc with the same arguments
  (less the dependency file, which the host unit writes): the kernels, their host stubs and
  their registration, 1-2 s with no torch header;
- the host unit (`<name>.host.cpp`) by the host compiler nvcc would have run, with nvcc's
  host-side flags (its `-D`, `-I`, `-std`, `-O`, `--compiler-options`, and what nvcc itself adds
  to its host compile) against torch/types.h where light_nvcc.py would swap it in, and kbench's
  ATen/Functions.h where one is offered;

then `<host compiler> -r` joins the two objects as OBJ, which the extension links as before.
An nvcc flag this module does not know to be device-only or to have a host meaning, or a
relocatable-device-code build, is Unfit: the unit is built whole.

Standard library only: light_nvcc.py runs it inside the sandboxed compile worker.
"""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aten_subset  # noqa: E402
import cuda_split  # noqa: E402
import nvcc_steps  # noqa: E402
from light_copy import TORCH_INCLUDE, first_error, write_copy  # noqa: E402

# nvcc options that change only the device code (with how many values follow when separate).
_DEVICE_ONLY = {
    "-gencode": 1, "--generate-code": 1, "-arch": 1, "--gpu-architecture": 1, "-code": 1,
    "--gpu-code": 1, "--expt-relaxed-constexpr": 0, "-expt-relaxed-constexpr": 0,
    "--expt-extended-lambda": 0, "-expt-extended-lambda": 0, "--extended-lambda": 0,
    "-extended-lambda": 0, "--use_fast_math": 0, "-use_fast_math": 0, "-ftz": 1, "--ftz": 1,
    "-prec-div": 1, "--prec-div": 1, "-prec-sqrt": 1, "--prec-sqrt": 1, "-fmad": 1, "--fmad": 1,
    "-Xptxas": 1, "--ptxas-options": 1, "-maxrregcount": 1, "--maxrregcount": 1, "-lineinfo": 0,
    "--generate-line-info": 0, "-G": 0, "--device-debug": 0, "-Xcudafe": 1, "--resource-usage": 0,
    "-res-usage": 0, "--threads": 1, "-t": 1, "-Wno-deprecated-gpu-targets": 0,
    "--Wno-deprecated-gpu-targets": 0, "--diag-suppress": 1, "-diag-suppress": 1, "--restrict": 0,
    "-restrict": 0, "--dlink-time-opt": 0, "-dlto": 0, "--extra-device-vectorization": 0,
    "-extra-device-vectorization": 0, "--display-error-number": 0, "--no-host-device-move-forward": 0,
}
# nvcc options the host compile takes as they are (joined, `-DX`, or with their value apart).
_HOST_JOINED = ("-D", "-U", "-I", "-O", "-std=", "-W", "-f")
_HOST_SEPARATE = {"-D": "-D", "--define-macro": "-D", "-U": "-U", "--undefine-macro": "-U",
                  "-I": "-I", "--include-path": "-I", "-isystem": "-isystem",
                  "--system-include": "-isystem", "-iquote": "-iquote", "-include": "-include",
                  "--pre-include": "-include", "-std": "-std=", "--std": "-std=",
                  "-O": "-O", "--optimize": "-O"}
_HOST_ALONE = {"-g": "-g", "--debug": "-g", "-w": "-w", "--disable-warnings": "-w", "-m64": "-m64",
               "-Wno-deprecated-declarations": "-Wno-deprecated-declarations"}
_COMPILER_OPTIONS = ("-Xcompiler", "--compiler-options")
_COMPILER_BINDIR = ("-ccbin", "--compiler-bindir")


def _value(args, i, name):
    """(value, next index) of option `name` at args[i]: `name=V`, `nameV` or `name V`."""
    arg = args[i]
    if arg == name:
        if i + 1 >= len(args):
            raise cuda_split.Unfit(f"nvcc flag {name} without its value")
        return args[i + 1], i + 2
    return arg[len(name):].lstrip("="), i + 1


def host_flags(args):
    """(host compiler, its flags) for what nvcc ARGS (less -c, -o and dependency options) mean
    for host code, or Unfit."""
    flags, compiler, i = [], None, 0
    while i < len(args):
        arg = args[i]
        name = arg.split("=", 1)[0]
        if name in _DEVICE_ONLY:
            i += 1 + (_DEVICE_ONLY[name] if "=" not in arg else 0)
        elif arg in _HOST_ALONE:
            flags.append(_HOST_ALONE[arg])
            i += 1
        elif name in _COMPILER_OPTIONS:
            value, i = _value(args, i, name)
            flags.extend(part for part in value.split(",") if part)
        elif name in _COMPILER_BINDIR:
            compiler, i = _value(args, i, name)
        elif name in _HOST_SEPARATE:
            value, i = _value(args, i, name)
            flag = _HOST_SEPARATE[name]
            flags.extend([flag, value] if flag in ("-isystem", "-iquote", "-include") else [flag + value])
        elif arg.startswith(_HOST_JOINED) and not arg.startswith(("-Werror", "-fmad", "-ftz")):
            flags.append(arg)
            i += 1
        else:
            raise cuda_split.Unfit(f"nvcc flag {arg}")
    return compiler, flags


def _compiler(nvcc, ccbin):
    """The host compiler nvcc runs: -ccbin's (a program, or a folder holding gcc), else gcc."""
    if ccbin:
        path = Path(ccbin)
        if path.is_dir():
            for name in ("g++", "gcc"):
                if (path / name).exists():
                    return str(path / name)
            raise cuda_split.Unfit(f"no gcc in -ccbin {ccbin}")
        return ccbin
    found = shutil.which("gcc")
    if found is None:
        raise cuda_split.Unfit("no gcc on PATH")
    return found


def _nvcc_host_defaults(nvcc):
    """What nvcc adds to its own host compile (nvcc --dryrun, CUDA 13): the CUDA include folders
    after the user's, the math declarations' macro, no psABI notes, 64 bits."""
    root = Path(nvcc).resolve().parent.parent
    include = root / "targets" / "x86_64-linux" / "include"
    include = include if include.is_dir() else root / "include"
    flags = ["-DCUDA_DOUBLE_MATH_FUNCTIONS", "-Wno-psabi", "-I" + str(include)]
    if (include / "cccl").is_dir():
        flags += ["-isystem", str(include / "cccl")]
    return flags + ["-m64"]


def _dependency_flags(deps, target):
    if not deps:
        return []
    return [deps["mode"], "-MF", deps["file"], "-MT", deps.get("target", target)]


def plan(nvcc, args, source, target, text, light_text):
    """(device command, host command, join command, the Split, the host unit's torch header, its
    ATen note) or Unfit. `light_text` is light_nvcc.py's swap of torch/extension.h."""
    split_options = nvcc_steps._split_dependency_options(args)
    if split_options is None:
        raise cuda_split.Unfit("nvcc options kbench runs as one command")
    rest, deps = split_options
    if any(a in ("-dc", "--device-c") or a.split("=")[0] in ("-rdc", "--relocatable-device-code")
           and not a.endswith("=false") for a in rest):
        raise cuda_split.Unfit("relocatable device code")
    at_source, at_target = rest.index("-c"), rest.index("-o")
    others = [a for k, a in enumerate(rest) if k not in (at_source, at_source + 1, at_target, at_target + 1)]
    ccbin, flags = host_flags(others)
    compiler = _compiler(nvcc, ccbin)
    parts = cuda_split.split(text, source)
    host_text, subset_flags, subset_note = parts.host, [], "not used: the unit has no torch include"
    if TORCH_INCLUDE.search(host_text):
        light = light_text(host_text)
        if light is not None:
            host_text = light
            planned = aten_subset.plan(light, source, args, "#include <torch/types.h>")
            if planned[0]:
                subset_flags, host_text, subset_note = planned
            else:
                subset_note = "torch's ATen/Functions.h: kbench's not used: " + planned[2]
    stem = Path(source).stem
    device_copy = write_copy(source, target, parts.device, name=f"{stem}.kernels.cu")
    host_copy = write_copy(source, target, host_text, name=f"{stem}.host.cpp")
    device_object = str(device_copy.with_suffix(".o"))
    host_object = str(host_copy.with_suffix(".o"))
    device = [nvcc, *others, "-c", str(device_copy), "-o", device_object]
    host = [compiler, *subset_flags, *flags, *_nvcc_host_defaults(nvcc), "-x", "c++", "-c",
            str(host_copy), "-o", host_object, *_dependency_flags(deps, target)]
    join = [compiler, "-r", "-nostdlib", "-o", target, device_object, host_object]
    header = ("torch/types.h" if "#include <torch/types.h>" in host_text else
              "its torch header as written" if TORCH_INCLUDE.search(host_text) else "no torch header")
    return device, host, join, parts, header, subset_note, device_copy


# `nm --format=posix`: NAME TYPE [VALUE [SIZE]]; a demangled name may hold spaces.
_POSIX_LINE = re.compile(r"^(.*?) ([A-Za-z?])(?: [0-9a-f]+)?(?: [0-9a-f]+)?\s*$")


def _symbols(obj, *options):
    """[(mangled, demangled, type letter)] of `nm OPTIONS obj`'s symbols, or Unfit."""
    names = []
    for demangle in ((), ("-C",)):
        done = subprocess.run(["nm", "--format=posix", *options, *demangle, obj], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace")
        if done.returncode != 0:
            raise cuda_split.Unfit(f"nm did not read {Path(obj).name} ({done.stdout.strip()[:200]})")
        names.append([m.groups() for m in map(_POSIX_LINE.match, done.stdout.splitlines()) if m])
    return [(mangled, demangled, kind) for (mangled, kind), (demangled, _) in zip(*names)]


def _kernel_references(host_object, kernels):
    """The host object's undefined references to the unit's kernels: [(mangled, demangled)]."""
    pattern = re.compile(r"^(void )?(" + "|".join(map(re.escape, kernels)) + r")[<(]")
    return [(m, d) for m, d, _ in _symbols(host_object, "--undefined-only") if pattern.match(d)]


def _instantiations(references, templates):
    """The device unit's explicit instantiations of the template kernels the host launches."""
    pattern = re.compile(r"^void (" + "|".join(map(re.escape, templates)) + r")<")
    return "".join(f"template __global__ {d};\n" for _, d in references if pattern.match(d))


def _run_side_by_side(commands):
    """Runs the commands at once; returns [(returncode, output, seconds)], stopping the others
    as soon as one fails (the unit is then built whole, and their work is not needed)."""
    started = time.monotonic()
    processes = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  errors="replace") for c in commands]
    results = [None] * len(processes)
    pending = set(range(len(processes)))
    while pending:
        for k in list(pending):
            if processes[k].poll() is not None:
                output = processes[k].stdout.read()
                results[k] = (processes[k].returncode, output, time.monotonic() - started)
                pending.discard(k)
                if processes[k].returncode != 0:
                    for other in pending:
                        processes[other].kill()
                        processes[other].wait()
                        results[other] = (-9, "", time.monotonic() - started)
                    pending.clear()
                    break
        time.sleep(0.02)
    return results


def build(nvcc, args, source, target, text, light_text):
    """Builds OBJ from the two units. Returns (0, output, note, aten note) when it did, or
    (None, None, why not, None) when the unit is to be built whole."""
    try:
        device, host, join, parts, header, subset_note, device_copy = plan(nvcc, args, source, target, text, light_text)
    except cuda_split.Unfit as unfit:
        return None, None, str(unfit), None
    host_object, device_object = host[host.index("-o") + 1], device[device.index("-o") + 1]
    if parts.templates:
        # The instantiations are the host object's references: the host unit first.
        ((host_rc, host_out, host_s),) = _run_side_by_side([host])
        if host_rc != 0:
            return None, None, f"the host unit did not compile ({first_error(host_out)})", None
        try:
            added = _instantiations(_kernel_references(host_object, parts.kernels), parts.templates)
        except cuda_split.Unfit as unfit:
            return None, None, str(unfit), None
        write_copy(source, target, parts.device + added, name=device_copy.name)
        # nvcc makes a template kernel's host stub static unless told otherwise, and the host
        # unit's launches are references from another object. One device unit holds every
        # instantiation, so the weak stubs this gives have one definition each.
        device = [device[0], "-static-global-template-stub=false", *device[1:]]
        ((device_rc, device_out, device_s),) = _run_side_by_side([device])
    else:
        (device_rc, device_out, device_s), (host_rc, host_out, host_s) = _run_side_by_side([device, host])
    if device_rc != 0 or host_rc != 0:
        failed = "device" if device_rc != 0 else "host"
        output = device_out if device_rc != 0 else host_out
        return None, None, f"the {failed} unit did not compile ({first_error(output)})", None
    joined = subprocess.run(join, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace")
    if joined.returncode != 0:
        return None, None, f"the two objects did not join ({joined.stdout.strip()[:300]})", None
    # Every kernel the host code launches or names must be one the device object defines (a
    # reference left undefined would fail only when the extension loads).
    try:
        # Global ones only (an upper-case type): a static stub is no definition for the host's.
        defined = {m for m, _, kind in _symbols(device_object, "--defined-only") if kind.isupper()}
        missing = [d for m, d in _kernel_references(host_object, parts.kernels) if m not in defined]
    except cuda_split.Unfit as unfit:
        missing = [str(unfit)]
    if missing:
        Path(target).unlink(missing_ok=True)
        return None, None, f"the host code names kernels the device unit does not define ({missing[0][:200]})", None
    note = (f"split: {len(parts.kernels)} kernel(s) in a device unit without torch ({device_s:.1f} s), "
            f"the host code ({parts.launches} launch(es)) by the host compiler against {header} "
            f"({host_s:.1f} s)")
    return 0, device_out + host_out, note, subset_note
