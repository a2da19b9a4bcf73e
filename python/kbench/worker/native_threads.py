"""Threads of this process as the kernel sees them (/proc/self/task): C++ threads too, which
threading.enumerate() never lists (docs/integrity.md, exploit class 7).

A thread is judged by what it is doing when the harness looks:
- `running`: on a CPU or waiting for one;
- `timed`: blocked in a call that returns on its own after a while (nanosleep, a futex, poll or
  epoll with a timeout): it will run again without anyone waking it;
- `idle`: blocked until something wakes it (a futex or condition variable without a timeout,
  a read). Thread pools wait like this between jobs: torch's OpenMP pool, c10's thread pool,
  the candidate's own OpenMP pool (it shares torch's libgomp);
- `gone`: exited, or a zombie.

OpenMP's workers spin for a few milliseconds after a parallel region before they block, so a
thread seen running is looked at again until it settles (`settle`).
"""

import os
import time

_TASKS = "/proc/self/task"

# Syscalls a blocked thread can sit in that end by themselves, by architecture: number ->
# index of the timeout argument (None: always timed; ("int", i): an int timeout, negative means
# none; i: a pointer, 0 means none).
_TIMED = {
    "x86_64": {
        202: 3, 449: 3,  # futex, futex_waitv
        35: None, 230: None,  # nanosleep, clock_nanosleep
        7: ("int", 2), 271: 2,  # poll, ppoll
        23: 4, 270: 4,  # select, pselect6
        232: ("int", 3), 281: ("int", 3), 441: 3,  # epoll_wait, epoll_pwait, epoll_pwait2
        128: 2, 220: 3, 243: 4, 299: 4, 208: 4,  # rt_sigtimedwait, semtimedop, mq_timedreceive,
        # recvmmsg, io_getevents
    },
    "aarch64": {
        98: 3, 449: 3,  # futex, futex_waitv
        101: None, 115: None,  # nanosleep, clock_nanosleep
        73: 2, 72: 4,  # ppoll, pselect6
        22: ("int", 3), 441: 3,  # epoll_pwait, epoll_pwait2
        137: 2, 192: 3, 183: 4, 243: 4, 4: 4,
    },
}
_FUTEX = {"x86_64": 202, "aarch64": 98}
# futex operations that wait (FUTEX_WAIT, FUTEX_LOCK_PI, FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI,
# FUTEX_LOCK_PI2); the others (wake, requeue) do not block.
_FUTEX_WAITS = {0, 6, 9, 11, 13}
_FUTEX_CMD_MASK = 0x7F

_MACHINE = os.uname().machine
_listdir = os.listdir
_open = os.open
_read = os.read
_close = os.close
_O_RDONLY = os.O_RDONLY
_sleep = time.sleep
_monotonic = time.monotonic


def tids():
    """Ids of the live threads of this process."""
    try:
        return {int(name) for name in _listdir(_TASKS)}
    except OSError:
        return set()


def _read_file(path):
    try:
        fd = _open(path, _O_RDONLY)
    except OSError:
        return None
    try:
        return _read(fd, 4096).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        _close(fd)


class ThreadState:
    __slots__ = ("tid", "state", "cpu_ticks", "syscall", "name")

    def __init__(self, tid, state, cpu_ticks=0, syscall="", name=""):
        self.tid, self.state, self.cpu_ticks, self.syscall, self.name = tid, state, cpu_ticks, syscall, name

    def describe(self):
        what = {"running": "running", "timed": f"waiting with a timeout ({self.syscall})"}.get(self.state, self.state)
        return f"tid {self.tid} '{self.name}' {what}"


def _syscall_name(number):
    names = {202: "futex", 35: "nanosleep", 230: "clock_nanosleep", 7: "poll", 271: "ppoll",
             23: "select", 270: "pselect6", 232: "epoll_wait", 281: "epoll_pwait"}
    if _MACHINE == "aarch64":
        names = {98: "futex", 101: "nanosleep", 115: "clock_nanosleep", 73: "ppoll", 72: "pselect6",
                 22: "epoll_pwait"}
    return names.get(number, f"syscall {number}")


def _blocked_state(syscall_text):
    """`timed` or `idle` for a thread blocked in the call /proc/<tid>/syscall shows."""
    fields = syscall_text.split()
    if not fields or fields[0] == "running":
        return "running", ""
    try:
        number = int(fields[0])
        args = [int(f, 16) for f in fields[1:7]]
    except ValueError:
        return "idle", ""
    table = _TIMED.get(_MACHINE)
    if table is None or number not in table:
        return "idle", ""
    if number == _FUTEX.get(_MACHINE) and (args[1] & _FUTEX_CMD_MASK) not in _FUTEX_WAITS:
        return "idle", ""
    where = table[number]
    if where is None:
        return "timed", _syscall_name(number)
    if isinstance(where, tuple):
        value = args[where[1]] & 0xFFFFFFFF
        timed = value < 0x80000000  # an int: negative (infinite) when the sign bit is set
    else:
        timed = args[where] != 0
    return ("timed" if timed else "idle"), _syscall_name(number)


def state_of(tid):
    stat = _read_file(f"{_TASKS}/{tid}/stat")
    if stat is None:
        return ThreadState(tid, "gone")
    close = stat.rfind(")")
    name = stat[stat.find("(") + 1:close]
    fields = stat[close + 2:].split()
    letter = fields[0] if fields else "X"
    ticks = int(fields[11]) + int(fields[12]) if len(fields) > 12 else 0
    if letter in "ZXx":
        return ThreadState(tid, "gone", ticks, "", name)
    if letter in "RD":  # D: uninterruptible, briefly (a page fault, I/O): it will go on
        return ThreadState(tid, "running", ticks, "", name)
    state, syscall = _blocked_state(_read_file(f"{_TASKS}/{tid}/syscall") or "")
    return ThreadState(tid, state, ticks, syscall, name)


def settle(suspects, deadline_s, still_suspect):
    """Looks at `suspects` (tids) again until `still_suspect(state)` holds for none or the
    deadline passes; returns the states that still hold it."""
    end = _monotonic() + deadline_s
    pause = 0.0005
    while True:
        left = [s for s in (state_of(t) for t in suspects) if still_suspect(s)]
        if not left or _monotonic() >= end:
            return left
        _sleep(pause)
        pause = min(pause * 2, 0.02)
        suspects = [s.tid for s in left]
