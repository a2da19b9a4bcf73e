"""Tensor files written a chunk at a time (python/kbench/worker/tensor_io.py, transfer.py): every
dtype, shape and layout reads back bit for bit with safetensors' own reader, across chunk
boundaries, past the file-size limit (the mapped part), and without a private copy of the
tensor's size (the reason for the chunks: a fresh allocation's pages cost the kernel's zeroing).
"""

import ctypes
import os

import pytest
import torch
from safetensors.torch import load_file

from kbench.worker import tensor_io, transfer

CASES = {
    "float32": torch.randn(33, 129),
    "bfloat16": torch.randn(7, 1000).to(torch.bfloat16),
    "float16": torch.randn(5001).to(torch.float16),
    "int64": torch.arange(-500, 4500, dtype=torch.int64),
    "uint8": torch.randint(0, 255, (3, 3000), dtype=torch.uint8),
    "bool": torch.rand(4099) > 0.5,
    "scalar": torch.tensor(3.25),
    "empty": torch.empty(0, 7),
    "transposed": torch.randn(64, 48).t(),
    "strided": torch.randn(40, 90)[::3, 5:80:2],
}


@pytest.fixture
def small_chunks(monkeypatch):
    """A stage buffer of 4 KiB, so that small tensors cross many chunk boundaries."""
    monkeypatch.setattr(tensor_io, "STAGE_BYTES", 4096)
    monkeypatch.setattr(tensor_io, "_stages", {})


def _read_back(path):
    return load_file(str(path))


@pytest.mark.parametrize("limit", [None, 8192, 0], ids=["write", "mapped-past-8KiB", "all-mapped"])
def test_every_dtype_and_layout_reads_back_bit_for_bit(small_chunks, monkeypatch, tmp_path, limit):
    # The limit decides which bytes go through write(2) and which through the mapping.
    monkeypatch.setattr(transfer, "_file_size_limit", lambda: limit)
    tensor_io.save_tensors(CASES, tmp_path / "t.safetensors")
    back = _read_back(tmp_path / "t.safetensors")
    assert back.keys() == CASES.keys()
    for name, t in CASES.items():
        assert back[name].dtype == t.dtype and back[name].shape == t.shape, name
        assert torch.equal(back[name], t), name


def test_outputs_and_values_keep_their_structure(small_chunks, tmp_path):
    values = [torch.randn(100, 100), 7, [torch.arange(10), 2.5], None]
    tensor_io.save_values(values, tmp_path / "inputs", "input")
    back = tensor_io.load_values(tmp_path / "inputs", None)
    assert torch.equal(back[0], values[0]) and back[1] == 7 and back[3] is None
    assert torch.equal(back[2][0], values[2][0]) and back[2][1] == 2.5
    outputs = [torch.randn(9000), torch.ones(2, 2, dtype=torch.int32)]
    tensor_io.save_outputs(outputs, tmp_path / "out.safetensors")
    read = _read_back(tmp_path / "out.safetensors")
    assert torch.equal(read["output.0"], outputs[0]) and torch.equal(read["output.1"], outputs[1])


PEAK_PROBE = """
import sys, torch
from kbench.worker import tensor_io

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))

t = torch.randn((128 << 20) // 4)  # 128 MiB: four chunks of the default stage
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak resident size (VmHWM) starts again from the current one
resident = status("VmRSS")
tensor_io._write({"output.0": t}, sys.argv[1])
print(status("VmHWM") - resident)
"""


def test_a_large_tensor_is_written_without_a_copy_of_its_size(tmp_path):
    # A fresh process, whose peak resident size is reset just before the write. A private copy
    # of the tensor (the way before) raised it by the tensor's 128 MiB; the stage is 32 MiB.
    import subprocess
    import sys

    path = tmp_path / "big.safetensors"
    done = subprocess.run([sys.executable, "-c", PEAK_PROBE, str(path)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    grown = int(done.stdout.split()[-1])
    assert grown < 64 << 20, f"writing 128 MiB raised the peak resident size by {grown >> 20} MiB"
    assert _read_back(path)["output.0"].numel() == (128 << 20) // 4


def test_a_source_that_yields_fewer_bytes_than_promised_is_an_error(tmp_path):
    buffer = bytearray(100)
    pointer = ctypes.addressof((ctypes.c_char * 100).from_buffer(buffer))
    specs = {"x": (torch.uint8, [200], lambda: iter([(pointer, 100)]), 200)}
    with pytest.raises(transfer.TransferError, match="100 bytes came where the header says 200"):
        transfer.write(specs, tmp_path / "short.safetensors")
