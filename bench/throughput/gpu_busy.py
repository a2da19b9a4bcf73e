"""GPU busy fraction over a window, from NVML's utilization counter (`nvidia-smi -lms`: the
percentage of each sample period in which a kernel ran), sampled every 100 ms in the background."""

import shutil
import subprocess
import threading
import time


class BusySampler:
    def __init__(self, period_ms: int = 100):
        self.samples = []  # (monotonic time, percent)
        self._proc = None
        if shutil.which("nvidia-smi"):
            self._proc = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                 f"-lms={period_ms}", "-i", "0"], stdout=subprocess.PIPE, text=True)
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self._proc.stdout:
            try:
                self.samples.append((time.monotonic(), float(line.strip())))
            except ValueError:
                pass

    def fraction(self, start: float, end: float):
        """Mean busy fraction between two monotonic times; None without samples."""
        inside = [p for t, p in self.samples if start <= t <= end]
        return sum(inside) / len(inside) / 100.0 if inside else None

    def stop(self):
        if self._proc:
            self._proc.terminate()
            self._proc.wait()
