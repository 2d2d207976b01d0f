"""Pages of a loaded model file this process need not hold: dropped after loading, read again on use.

llama.cpp maps the whole GGUF with MAP_POPULATE, so every byte of it is resident from the first
second. Most of that is right (every weight matrix is read for every token), but a model whose output
head is a tensor of its own reads its token embedding only a row per prompt token: a few hundred of
262,144 rows a question. `release` tells the kernel this process no longer needs a span of the file
(madvise MADV_DONTNEED on a clean, read-only file mapping: nothing is lost, a page read again is
faulted back from the page cache), so resident memory is what the model really reads. Linux only;
elsewhere, and when the file is not mapped, it does nothing.
"""
from __future__ import annotations

import ctypes
import logging
import mmap
import os
import sys
from pathlib import Path

log = logging.getLogger(__name__)

MADV_DONTNEED = 4
"""Linux's madvise advice: drop these pages from this process (file-backed ones stay in the page cache)."""


def mappings(path: Path, maps: str = "/proc/self/maps") -> list[tuple[int, int, int]]:
    """(start address, end address, file offset) of every mapping of `path` in this process."""
    real = os.path.realpath(path)
    found = []
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and fields[5].rstrip("\n") == real:
                    start, end = (int(x, 16) for x in fields[0].split("-"))
                    found.append((start, end, int(fields[2], 16)))
    except OSError:
        return []
    return found


def page_span(start: int, end: int, offset: int, first: int, length: int,
              page: int = mmap.PAGESIZE) -> tuple[int, int] | None:
    """The whole pages (address, bytes) of file bytes [first, first + length) inside a mapping of
    [start, end) at file `offset`; pages shared with bytes outside the span are kept."""
    lo = max(first, offset)
    hi = min(first + length, offset + (end - start))
    if hi <= lo:
        return None
    a = start + (lo - offset)
    b = start + (hi - offset)
    a = -(-a // page) * page
    b = b // page * page
    return (a, b - a) if b > a else None


def release(path: Path, first: int, length: int) -> int:
    """Drop this process's pages of `path`'s bytes [first, first + length); returns the bytes dropped."""
    if not sys.platform.startswith("linux"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    dropped = 0
    for start, end, offset in mappings(Path(path)):
        span = page_span(start, end, offset, first, length)
        if span is None:
            continue
        if libc.madvise(span[0], span[1], MADV_DONTNEED) != 0:
            log.debug("madvise on %s failed: %s", Path(path).name, os.strerror(ctypes.get_errno()))
            continue
        dropped += span[1]
    return dropped


def resident(path: Path, smaps: str = "/proc/self/smaps") -> int:
    """Bytes of `path` this process holds resident, over all its mappings (0 where unknown)."""
    real = os.path.realpath(path)
    total, inside = 0, False
    try:
        with open(smaps, encoding="utf-8", errors="replace") as f:
            for line in f:
                first = line.split(maxsplit=1)[0]
                if "-" in first and not first.endswith(":"):  # a mapping's header line
                    fields = line.split(maxsplit=5)
                    inside = len(fields) == 6 and fields[5].rstrip("\n") == real
                elif inside and first == "Rss:":
                    total += int(line.split()[1]) * 1024
    except OSError:
        return 0
    return total
