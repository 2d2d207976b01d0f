"""Dropping a mapped file's pages: the span's whole pages leave this process, the bytes stay readable;
only read-only mappings that were not there before are ever advised."""
from __future__ import annotations

import mmap

from edge_agent.llm.residency import drop, lookup_pages, mappings, page_span, resident

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


def _smaps(tmp_path, entries):
    lines = []
    for start, perms, offset, name, rss_kb in entries:
        lines.append(f"{start:x}-{start + 4 * PAGE:x} {perms} {offset:08x} 103:02 1234     {name}")
        lines += ["Size:                 16 kB", f"Rss:          {rss_kb:8d} kB", "Pss:                 16 kB",
                  "VmFlags: rd mr mw me"]
    path = tmp_path / "smaps"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_mappings_of_the_file_are_read_from_smaps_by_their_whole_path(tmp_path):
    model = tmp_path / "my models" / "m.gguf"  # a space in the path
    model.parent.mkdir()
    model.write_bytes(b"\0" * 8 * PAGE)
    smaps = _smaps(tmp_path, [
        (0x7000000000, "r--s", 0, str(model), 16),
        (0x7100000000, "r--s", 4 * PAGE, str(model), 8),  # the file's second half, mapped apart
        (0x7200000000, "rw-p", 0, str(model), 4),  # writable: a written private page would be lost
        (0x7300000000, "r--s", 0, str(model) + " (deleted)", 16),  # another file, gone
        (0x7400000000, "r--s", 0, str(tmp_path / "other.gguf"), 16),
    ])
    found = list(mappings(model, smaps))
    assert [(m.start, m.offset, m.writable, m.rss) for m in found] == [
        (0x7000000000, 0, False, 16 * 1024), (0x7100000000, 4 * PAGE, False, 8 * 1024),
        (0x7200000000, 0, True, 4 * 1024)]
    assert resident(model, smaps) == 28 * 1024
    pages = lookup_pages(model, 2 * PAGE, 4 * PAGE, smaps)  # file pages 2-5: two in each read-only mapping
    assert pages == [(0x7000000000 + 2 * PAGE, 2 * PAGE), (0x7100000000, 2 * PAGE)]
    # a mapping that was there before this model was loaded belongs to another one: never advised
    assert lookup_pages(model, 2 * PAGE, 4 * PAGE, smaps, before=frozenset({0x7000000000})) == [
        (0x7100000000, 2 * PAGE)]
    assert list(mappings(model, str(tmp_path / "no-such-smaps"))) == []


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
        dropped = drop(lookup_pages(path, 8 * PAGE + 100, 40 * PAGE))  # the first and last page are shared: kept
        assert dropped == 39 * PAGE
        assert resident(path) == before - dropped
        assert mapped[:] == data  # read again from the page cache, unchanged
        assert resident(path) == before
        pages = lookup_pages(path, 0, len(data))
        assert drop(pages) == len(data) and resident(path) == 0  # advised again: gone again
        assert mapped[PAGE:PAGE + 4] == data[PAGE:PAGE + 4]
    finally:
        mapped.close()


def test_a_file_this_process_has_not_mapped_is_left_alone(tmp_path):
    path = tmp_path / "elsewhere.bin"
    path.write_bytes(b"\0" * 4 * PAGE)
    assert drop(lookup_pages(path, 0, 4 * PAGE)) == 0
    assert resident(path) == 0
    assert drop([]) == 0
