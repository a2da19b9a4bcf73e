"""Which Landlock rule CUDA needs: each configuration restricts a fresh child process with
Landlock (reads everywhere, writes only beneath the listed paths), then initialises CUDA
through torch. Prints one line per configuration. A diagnostic for docs/architecture.md's
"Sandbox" section; run on a GPU machine: python3 scripts/landlock-cuda-probe.py"""

import ctypes
import os
import struct
import sys

CREATE, ADD_RULE, RESTRICT = 444, 445, 446
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
READ = EXECUTE | READ_FILE | READ_DIR
ALL_WRITE = WRITE_FILE | sum(1 << b for b in range(4, 15))  # remove/make/refer/truncate
libc = ctypes.CDLL(None, use_errno=True)


def restrict(handled, rules):
    attr = struct.pack("Q", handled)
    fd = libc.syscall(CREATE, attr, len(attr), 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for path, rights in rules:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        is_dir = os.path.isdir(path)
        allowed = rights if is_dir else rights & (EXECUTE | WRITE_FILE | READ_FILE | (1 << 14))
        rule = struct.pack("=Qi", allowed & handled, target)
        if libc.syscall(ADD_RULE, fd, 1, rule, 0) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    if libc.syscall(RESTRICT, fd, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")


def child(handled, writable):
    restrict(handled, [("/", READ)] + [(p, READ | ALL_WRITE) for p in writable if os.path.exists(p)])
    import torch

    try:
        torch.cuda.init()
        print("ok", torch.cuda.device_count(), "device(s)", flush=True)
    except Exception as exc:  # noqa: BLE001
        print("FAILED", str(exc)[:160], flush=True)


CONFIGS = [
    ("writes beneath /dev", READ | ALL_WRITE, ["/dev"]),
    ("/dev + /tmp", READ | ALL_WRITE, ["/dev", "/tmp"]),
    ("/dev + /proc", READ | ALL_WRITE, ["/dev", "/proc"]),
    ("/dev + own /proc/<pid>", READ | ALL_WRITE, ["/dev", "/proc/self"]),
    ("/dev + /sys", READ | ALL_WRITE, ["/dev", "/sys"]),
    ("/dev + $HOME", READ | ALL_WRITE, ["/dev", os.path.expanduser("~")]),
    ("/dev + /run + /var", READ | ALL_WRITE, ["/dev", "/run", "/var"]),
    ("/dev, truncate not handled", READ | (ALL_WRITE & ~(1 << 14)), ["/dev"]),
    ("/dev, reads not handled", ALL_WRITE, ["/dev"]),
    ("writes everywhere", READ | ALL_WRITE, ["/"]),
]

if __name__ == "__main__":
    for label, handled, writable in CONFIGS:
        sys.stdout.write(f"{label:32s} ")
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            try:
                child(handled, writable)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
