"""Pages of a loaded model file this process need not hold: dropped after loading and after each call.

llama.cpp maps the whole GGUF read-only and shared, with MAP_POPULATE, so every byte of it is
resident from the first second. Most of that is read again for every token (the matrices llama.cpp
did not copy into a repacked buffer of its own), but a model whose output head is a tensor of its
own reads its token embedding only a row per prompt token: a few hundred of 262,144 rows a question.
`lookup_pages` finds that span's whole pages in this process's read-only mappings of the file and
`drop` tells the kernel this process no longer needs them (madvise MADV_DONTNEED on a clean shared
file mapping: nothing is lost, a row read again is faulted back from the page cache, with the
kernel's fault-around up to 64 KiB of its neighbours). The runtime drops them after loading and after
every model call, so what stays resident is what the model reads. Linux only (/proc/self/smaps);
elsewhere nothing is found and nothing dropped.
"""
from __future__ import annotations

import ctypes
import functools
import logging
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

log = logging.getLogger(__name__)

MADV_DONTNEED = 4
"""Linux's madvise advice: drop these pages from this process (file-backed ones stay in the page cache)."""
SMAPS = "/proc/self/smaps"


@dataclass(frozen=True)
class Mapping:
    """One mapping of a file in this process, as /proc/self/smaps lists it."""

    start: int
    """First address."""
    end: int
    """Address after the last."""
    writable: bool
    """Mapped for writing (never dropped: a private page written to would be lost)."""
    offset: int
    """File offset of `start`."""
    rss: int
    """Bytes of it resident."""


def mappings(path: Path, smaps: str = SMAPS) -> Iterator[Mapping]:
    """Every mapping of `path` in this process (none where smaps cannot be read)."""
    real = os.fsencode(os.path.realpath(path))
    current: Mapping | None = None
    try:
        with open(smaps, "rb") as f:
            for line in f:
                head = line.split(maxsplit=5)
                if head and b"-" in head[0] and not head[0].endswith(b":"):  # a mapping's first line
                    if current is not None:
                        yield current
                    current = None
                    if len(head) == 6 and head[5].rstrip(b"\n") == real:
                        start, end = (int(x, 16) for x in head[0].split(b"-"))
                        current = Mapping(start, end, b"w" in head[1], int(head[2], 16), 0)
                elif current is not None and head[:1] == [b"Rss:"]:
                    current = Mapping(current.start, current.end, current.writable, current.offset,
                                      int(head[1]) * 1024)
    except OSError:
        return
    if current is not None:
        yield current


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


def lookup_pages(path: Path, first: int, length: int, smaps: str = SMAPS,
                 before: frozenset[int] = frozenset()) -> list[tuple[int, int]]:
    """(address, bytes) of the whole pages of `path`'s bytes [first, first + length) in this
    process's read-only mappings of it, but those starting at an address in `before` (mappings that
    were there before the model was loaded: another model's, which may close and free them). Valid
    only while those mappings live."""
    spans = (page_span(m.start, m.end, m.offset, first, length) for m in mappings(path, smaps)
             if not m.writable and m.start not in before)
    return [span for span in spans if span is not None]


def drop(pages: list[tuple[int, int]]) -> int:
    """Drop these pages (lookup_pages) from this process; returns the bytes dropped."""
    if not pages:
        return 0
    libc = _libc()
    dropped = 0
    for address, size in pages:
        if libc.madvise(address, size, MADV_DONTNEED) != 0:
            log.debug("madvise at %#x failed: %s", address, os.strerror(ctypes.get_errno()))
            continue
        dropped += size
    return dropped


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return libc


def resident(path: Path, smaps: str = SMAPS) -> int:
    """Bytes of `path` this process holds resident, over all its mappings (0 where unknown)."""
    return sum(m.rss for m in mappings(path, smaps))
