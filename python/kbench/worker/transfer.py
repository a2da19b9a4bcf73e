"""Writing a safetensors file into a file of its exact length, through a shared mapping.

Workers run under RLIMIT_FSIZE (8 GiB by default), which the kernel checks on every write(2)
at an offset past the limit and on every ftruncate that grows a file, but not on stores through
a mapping of pages the file already has. So a tensor file of any size is written this way: its
length is computed first, the orchestrator (which has no such limit) makes the file at that
length when the worker asks (`grant`, src/sandbox/transfer_files.hpp), and the bytes past the
limit are copied in through mmap (those below it with write(2), which is cheaper). Outside a worker (tests, benches) `grant` is None and the file is sized here.

Nothing here calls a method of the tensors: the caller gives each one's dtype, shape, data
pointer and byte count, read through the callables captured before any candidate ran.
"""

import ctypes
import json
import mmap
import os
import resource

from safetensors.torch import _TYPES

_NAMES = {dtype: name for name, dtype in _TYPES.items()}
_memmove = ctypes.memmove


class TransferError(Exception):
    """A tensor file that could not be made or filled; the message says which and why."""


def layout(specs):
    """The header bytes (length prefix, JSON, padding to 8) and each tensor's data offset.

    `specs` maps a name to (torch dtype, shape, source, byte count), in file order; the source
    is the data's pointer, or a callable that yields the bytes as (pointer, count) chunks."""
    header, offset, offsets = {}, 0, []
    for name, (dtype, shape, _, nbytes) in specs.items():
        if dtype not in _NAMES:
            raise TransferError(f"tensor {name}: safetensors cannot store dtype {dtype}")
        header[name] = {"dtype": _NAMES[dtype], "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offsets.append(offset)
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(len(text) + 8) % 8)
    return len(text).to_bytes(8, "little") + text, offsets, offset


def describe(specs):
    """'input.0 [4096, 4096] float32, input.1 ...' for messages, the first few tensors."""
    parts = [f"{name} {list(shape)} {str(dtype).replace('torch.', '')}" for name, (dtype, shape, _, _) in specs.items()]
    return ", ".join(parts[:3]) + (f" and {len(parts) - 3} more" if len(parts) > 3 else "")


def _file_size_limit():
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def _pwrite_all(fd, view, offset):
    while len(view):
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def _put(fd, mapped, anchor, cut, offset, piece):
    """One piece (bytes-like, or (pointer, count)) at `offset`: write(2) below `cut`, the
    mapping of the file's bytes from `cut` on past it."""
    if isinstance(piece, tuple):
        ptr, count = piece
        if not count:
            return
        view = memoryview((ctypes.c_char * count).from_address(ptr)).cast("B")
    else:
        view, ptr, count = memoryview(piece), None, len(piece)
    below = max(0, min(count, cut - offset))
    if below:
        _pwrite_all(fd, view[:below], offset)
    if below < count:
        start = offset + below - cut
        if ptr is not None:
            _memmove(ctypes.addressof(anchor) + start, ptr + below, count - below)
        else:
            mapped[start : start + count - below] = view[below:]
    view.release()


def _counted(name, source, nbytes):
    """`source`'s chunks, checked to add up to the `nbytes` the header promised."""

    def chunks():
        seen = 0
        for ptr, count in source():
            seen += count
            if seen > nbytes:
                break
            yield ptr, count
        if seen != nbytes:
            raise TransferError(f"tensor {name}: {seen} bytes came where the header says {nbytes}")

    return chunks


def _fill(fd, pieces, total):
    """Copies `pieces` ((file offset, bytes-like, (pointer, count), or a callable that yields
    (pointer, count) chunks in order, each valid until the next is asked for)) into the file `fd`
    of `total` bytes: write(2) below this process's file-size limit, where it is cheaper than
    faulting in the pages of a mapping (bench/transfer), and a shared mapping past it."""
    limit = _file_size_limit()
    cut = total if limit is None else min(total, limit // mmap.ALLOCATIONGRANULARITY * mmap.ALLOCATIONGRANULARITY)
    mapped = mmap.mmap(fd, total - cut, offset=cut) if cut < total else None
    try:
        anchor = ctypes.c_char.from_buffer(mapped) if mapped is not None else None
        try:
            for offset, piece in pieces:
                if not callable(piece):
                    _put(fd, mapped, anchor, cut, offset, piece)
                    continue
                for chunk in piece():
                    _put(fd, mapped, anchor, cut, offset, chunk)
                    offset += chunk[1]
        finally:
            del anchor
    finally:
        if mapped is not None:
            mapped.close()


def write(specs, path, grant=None):
    """Writes the tensors of `specs` (see `layout`) as a safetensors file at `path`.

    `grant(path, nbytes, what)` asks the orchestrator for the file; it returns False where no
    orchestrator grants files (the file is then sized here, under this process's limits) and
    raises TransferError when the orchestrator refuses."""
    path = os.path.abspath(str(path))
    head, offsets, data_bytes = layout(specs)
    total = len(head) + data_bytes
    what = f"tensors {describe(specs)}" if specs else "an empty tensor file"
    if grant is None or not grant(path, total, what):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            os.ftruncate(fd, total)
        except OSError as exc:
            os.close(fd)
            raise TransferError(f"cannot size {path} to {total} bytes for {what}: {exc}") from None
    else:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        if size != total:
            raise TransferError(f"{path} is {size} bytes where {what} need {total}")
        pieces = [(0, head)] + [
            (len(head) + offset, _counted(name, source, nbytes) if callable(source) else (source, nbytes))
            for (name, (_, _, source, nbytes)), offset in zip(specs.items(), offsets)
        ]
        _fill(fd, pieces, total)
    finally:
        os.close(fd)
