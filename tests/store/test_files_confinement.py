"""A file peer never leaves its roots: symlinks out of a root are refused at index and read time."""
import asyncio
import os

import pytest

from edge_agent.store.extract import ExtractionError, extract
from edge_agent.store.files import index_paths, search_files

SECRET = "root:x:0:0:planted secret zebracorn"


@pytest.fixture
def layout(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text(SECRET, encoding="utf-8")
    (outside / "private").mkdir()
    (outside / "private" / "diary.txt").write_text("zebracorn diary kept outside", encoding="utf-8")
    root = tmp_path / "shared"
    root.mkdir()
    (root / "notes.txt").write_text("shopping list: oat milk", encoding="utf-8")
    (root / "inner.txt").write_text("the boiler manual lives in the hall", encoding="utf-8")
    return tmp_path, root, outside


async def test_file_and_folder_symlinks_out_of_the_root_are_refused(store, layout):
    _, root, outside = layout
    os.symlink(outside / "passwd", root / "passwd.txt")  # a file link to a file outside
    os.symlink(outside / "private", root / "private")  # a folder link to a folder outside
    os.symlink(root / "inner.txt", root / "alias.txt")  # a link that stays inside is fine
    report = await index_paths(store.conn, "pi", [root])
    assert any("passwd.txt" in r and "outside" in r for r in report.rejects)
    assert any(r.startswith(str(root / "private")) for r in report.rejects)
    names = {h["name"] for h in await search_files(store.conn, "boiler manual hall")}
    assert names == {"inner.txt", "alias.txt"}
    assert await search_files(store.conn, "zebracorn") == []
    assert await search_files(store.conn, "root planted secret") == []


async def test_dotdot_in_a_query_reaches_nothing_outside(store, layout):
    _, root, _ = layout
    await index_paths(store.conn, "pi", [root])
    for query in ("../outside/passwd", "../../etc/passwd", "/etc/passwd zebracorn", "..", "private/diary.txt"):
        hits = await search_files(store.conn, query)
        assert all(os.path.realpath(h["path"]).startswith(str(root)) for h in hits), query
        assert not any("zebracorn" in h["excerpt"] for h in hits), query


async def test_a_root_that_is_itself_a_symlink_is_indexed_by_its_real_path(store, layout):
    tmp, root, outside = layout
    link = tmp / "root-link"
    os.symlink(root, link)
    os.symlink(outside / "passwd", root / "escape.txt")
    report = await index_paths(store.conn, "pi", [link])
    assert report.indexed == 2 and any("escape.txt" in r for r in report.rejects)
    hits = await search_files(store.conn, "oat milk")
    assert hits[0]["path"] == str(root.resolve() / "notes.txt")
    assert await search_files(store.conn, "zebracorn") == []


async def test_a_file_swapped_for_a_symlink_after_indexing_is_not_served(store, layout):
    _, root, outside = layout
    target = root / "notes.txt"
    await index_paths(store.conn, "pi", [root])
    assert (await search_files(store.conn, "oat milk"))[0]["name"] == "notes.txt"
    target.unlink()
    os.symlink(outside / "passwd", target)  # swapped before the next re-index
    assert await search_files(store.conn, "oat milk") == []  # the read-time check refuses the stale row
    report = await index_paths(store.conn, "pi", [root])
    assert any("notes.txt" in r for r in report.rejects) and report.removed == 1
    assert await search_files(store.conn, "zebracorn") == []


async def test_indexing_runs_off_the_event_loop(store, tmp_path, monkeypatch):
    """os.walk, stat and extraction happen in worker threads, never on the loop's thread."""
    import threading

    import edge_agent.store.files as files

    root = tmp_path / "docs"
    root.mkdir()
    for i in range(5):
        (root / f"f{i}.txt").write_text(f"file number {i}", encoding="utf-8")
    loop_thread = threading.get_ident()
    threads: list[int] = []
    real_walk, real_extract = files.os.walk, files.extract

    def spy_walk(*a, **k):
        threads.append(threading.get_ident())
        return real_walk(*a, **k)

    def spy_extract(path):
        threads.append(threading.get_ident())
        return real_extract(path)

    monkeypatch.setattr(files.os, "walk", spy_walk)
    monkeypatch.setattr(files, "extract", spy_extract)
    report = await index_paths(store.conn, "pi", [root])
    assert report.indexed == 5 and len(threads) == 6
    assert loop_thread not in threads


async def test_a_named_pipe_is_skipped_not_waited_on(store, layout):
    # A FIFO called pipe.txt: opening it for reading waits for a writer that never comes.
    _, root, _ = layout
    os.mkfifo(root / "pipe.txt")
    report = await asyncio.wait_for(index_paths(store.conn, "pi", [root]), timeout=20)
    assert any("pipe.txt" in r and "not a regular file" in r for r in report.rejects)
    assert {h["name"] for h in await search_files(store.conn, "shopping list")} == {"notes.txt"}


def test_reading_a_pipe_as_text_refuses_at_once(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    with pytest.raises(ExtractionError, match="not a regular file"):
        extract(tmp_path / "pipe.txt")


async def test_a_file_that_takes_too_long_is_indexed_by_name_and_the_rest_go_on(store, layout, monkeypatch):
    import time

    from edge_agent.store import files

    _, root, _ = layout
    (root / "huge-report.pdf").write_bytes(b"%PDF-1.4 not really")
    real = files.extract

    def slow(path):
        if path.name == "huge-report.pdf":
            time.sleep(3)
        return real(path)

    monkeypatch.setattr(files, "extract", slow)
    monkeypatch.setattr(files, "FILE_TIME_CAP_S", 0.5)
    started = time.monotonic()
    report = await index_paths(store.conn, "pi", [root])
    assert time.monotonic() - started < 2.5
    assert any("huge-report.pdf" in r and "took over" in r for r in report.rejects)
    assert {h["name"] for h in await search_files(store.conn, "huge report")} == {"huge-report.pdf"}
    assert {h["name"] for h in await search_files(store.conn, "shopping list")} == {"notes.txt"}
