"""Dropping a mapped file's pages: the span's whole pages leave this process, the bytes stay readable."""
from __future__ import annotations

import mmap
import pytest

from edge_agent.llm.residency import page_span, release, resident

PAGE = mmap.PAGESIZE

def test_only_whole_pages_inside_the_span_are_dropped():
    start, offset = 0x10000 * PAGE, 0
    assert page_span(start, start + 8 * PAGE, offset, PAGE, 3 * PAGE) == (start + PAGE, 3 * PAGE)
    # a span starting and ending mid-page keeps the pages it shares with other bytes
    assert page_span(start, start + 8 * PAGE, offset, PAGE + 10, 3 * PAGE) == (start + 2 * PAGE, 2 * PAGE)
    assert page_span(start, start + 8 * PAGE, offset, 10, 20) is None
    # the mapping begins at file offset 2 pages: file page 3 is its second page
    assert page_span(start, start + 4 * PAGE, 2 * PAGE, 3 * PAGE, PAGE) == (start + PAGE, PAGE)
    # a span past the mapping's end is cut at it; one outside it is nothing
    assert page_span(start, start + 4 * PAGE, 0, 2 * PAGE, 10 * PAGE) == (start + 2 * PAGE, 2 * PAGE)
    assert page_span(start, start + 4 * PAGE, 0, 5 * PAGE, PAGE) is None


def test_a_released_span_leaves_resident_memory_and_reads_back_the_same_bytes(tmp_path):
    path = tmp_path / "weights.bin"
    data = bytes(range(256)) * (64 * PAGE // 256)
    path.write_bytes(data)
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    try:
        assert sum(mapped[i] for i in range(0, len(data), PAGE)) >= 0  # touch every page
        before = resident(path)
        assert before == len(data)
        dropped = release(path, 8 * PAGE + 100, 40 * PAGE)  # the first and last page are shared: kept
        assert dropped == 39 * PAGE
        assert resident(path) == before - dropped
        assert mapped[:] == data  # read again from the page cache, unchanged
        assert resident(path) == before
    finally:
        mapped.close()


def test_a_file_this_process_has_not_mapped_is_left_alone(tmp_path):
    path = tmp_path / "elsewhere.bin"
    path.write_bytes(b"\0" * 4 * PAGE)
    assert release(path, 0, 4 * PAGE) == 0
    assert resident(path) == 0
