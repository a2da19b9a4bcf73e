"""Cost of passing one tensor between processes, against its size (issue 16, item 1).

Per size, three ways of writing a tensor file and reading it back as the next process does
(safetensors.torch.load_file), interleaved round by round so the machine's load falls on each
alike:
  old:      safetensors' own writer (serialize_file from the tensor's pointer, as tensor_io.py
            wrote before the transfer channel; save_file on safetensors < 0.8), into the scratch
            directory's filesystem ($TMPDIR);
  new:      the transfer channel (python/kbench/worker/transfer.py): the file made at its exact
            length by fallocate (kbench's side, src/sandbox/transfer_files.cpp, issues the same
            call) and filled, in the same directory, with write(2), as a worker fills the bytes
            below its file-size limit (8 GiB);
  new-mmap: the same with the file-size limit lowered to 0 for the write, so that every byte
            goes through the shared mapping, as the bytes past the limit do;
  new-shm:  `new` in /dev/shm, for what a tmpfs scratch directory would save (kbench keeps
            transfer files in the scratch directory: docs/architecture.md, "Transfer").
And how a worker gets a tensor's bytes to the channel (`--device cuda`: a tensor on the GPU, the
only ways then):
  copy:     a private CPU copy of the whole tensor first (tensor_io.py before the stage), then
            `new` from the copy;
  staged:   tensor_io's writer: the bytes a chunk at a time through one reusable buffer,
            page-locked for a GPU's tensor.
Each figure is the median wall time of write plus read; ratios are to `old` (to `copy` on cuda)
in the same run.
Usage: python3 bench/transfer/run.py [--sizes-mb 1,16,128,1024] [--rounds 5] [--device cuda]
  [--build BUILD_DIR]
Needs torch and safetensors (kbench's venv) and, for `staged`, kbench_native from BUILD_DIR/python
(default build/); `--device cpu` (the default) runs on any machine.
"""

import argparse
import importlib.util
import os
import resource
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_transfer():
    spec = importlib.util.spec_from_file_location("transfer", ROOT / "python/kbench/worker/transfer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="1,16,128,1024")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--build", type=Path, default=ROOT / "build")
    args = parser.parse_args()

    import torch
    from safetensors.torch import load_file, save_file

    transfer = load_transfer()
    disk = Path(tempfile.mkdtemp(prefix="kbench-bench-transfer-"))
    shm = Path(tempfile.mkdtemp(prefix="kbench-bench-transfer-", dir="/dev/shm")) if os.path.isdir("/dev/shm") else None

    import safetensors

    def old(t, path):  # tensor_io's writer before the transfer channel, zero-copy where it can be
        if getattr(safetensors, "TensorSpec", None) is None:
            save_file({"output.0": t}, str(path))
            return
        spec = safetensors.TensorSpec(dtype=str(t.dtype).split(".")[-1], shape=list(t.shape),
                                      data_ptr=t.data_ptr(), data_len=t.numel() * t.element_size())
        safetensors.serialize_file({"output.0": spec}, str(path), metadata=None)

    def new(t, path, limit=None):
        nbytes = t.numel() * t.element_size()
        specs = {"output.0": (t.dtype, list(t.shape), t.data_ptr(), nbytes)}
        head, _, data = transfer.layout(specs)

        def grant(p, total, what):  # what kbench does for the worker: the file at its length
            fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            os.posix_fallocate(fd, 0, total)
            os.close(fd)
            if limit is not None:  # the soft limit only: raised again below
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
            return True

        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        try:
            transfer.write(specs, path, grant)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))

    def new_mmap(t, path):
        new(t, path, limit=0)

    sys.path[:0] = [str(ROOT / "python"), str(args.build / "python")]
    from kbench.worker import tensor_io

    def copy(t, path):  # the whole tensor to a private CPU copy first, as tensor_io did
        new(tensor_io._private_cpu_copy(t), path)

    def staged(t, path):
        tensor_io._write({"output.0": t}, str(path))

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    ways = [("old", old, disk), ("new", new, disk), ("new-mmap", new_mmap, disk)] + ([("new-shm", new, shm)] if shm else [])
    ways += [("copy", copy, disk), ("staged", staged, disk)]
    if args.device == "cuda":
        ways = ways[-2:]
    base = ways[0][0]
    print(f"scratch filesystem: {disk.parent}; tmpfs: {shm.parent if shm else 'none'}; "
          f"torch {torch.__version__}; {os.cpu_count()} cores")
    print(f"{'size':>8} " + " ".join(f"{name + ' ms':>12}" for name, _, _ in ways) + f"   ratios to {base}")
    for mb in [int(x) for x in args.sizes_mb.split(",")]:
        t = torch.randn(mb * (1 << 20) // 4, device=args.device)
        times = {name: [] for name, _, _ in ways}
        for round_ in range(args.rounds + 1):
            for name, write, where in ways:
                path = where / f"{name}.safetensors"
                start = time.perf_counter()
                write(t, path)
                back = load_file(str(path))["output.0"]
                elapsed = time.perf_counter() - start
                if round_ == 0 and not torch.equal(back, t.cpu()):
                    sys.exit(f"{name}: the tensor read back differs from the one written")
                del back
                path.unlink()
                if round_ > 0:  # the first round warms the page cache and allocator
                    times[name].append(elapsed)
        medians = {name: statistics.median(v) * 1e3 for name, v in times.items()}
        ratios = ", ".join(f"{name} {medians[name] / medians[base]:.2f}x" for name in medians if name != base)
        print(f"{mb:>6}MB " + " ".join(f"{medians[name]:>12.1f}" for name, _, _ in ways) + f"   {ratios}")
        del t
    os.rmdir(disk)
    if shm:
        os.rmdir(shm)


if __name__ == "__main__":
    main()
