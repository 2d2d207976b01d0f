"""bench model's memory figures: resident memory, and the part of it no file backs."""
from __future__ import annotations

import mmap

from edge_agent.eval.bench_model import memory_mb

MB = 2**20


def test_pages_of_an_mapped_file_are_resident_but_not_anonymous(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(b"\x01" * (64 * MB))
    before = memory_mb()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        touched = sum(m[i] for i in range(0, len(m), 4096))  # read one byte a page: all resident
        mapped = memory_mb()
    assert touched == 64 * MB // 4096
    assert mapped["rss_mb"] - before["rss_mb"] > 48
    assert mapped["anon_mb"] - before["anon_mb"] < 16


def test_memory_the_process_owns_counts_as_anonymous():
    # A fresh private anonymous mapping, every page written: new pages however much the allocator kept from
    # earlier tests (a bytearray may reuse heap pages already resident, and then nothing grows).
    before = memory_mb()
    with mmap.mmap(-1, 64 * MB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS) as owned:
        for i in range(0, len(owned), 4096):
            owned[i] = 1
        after = memory_mb()
    assert after["anon_mb"] - before["anon_mb"] > 48
    assert 0 < after["anon_mb"] <= after["rss_mb"]
