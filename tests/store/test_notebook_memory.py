"""Notebook and memory log: migrations, CRUD, FTS sync and ranking on a real SQLite file."""
import pytest

from edge_agent.store import Store
from edge_agent.store.db import all_migrations


async def test_migrations_apply_once_and_are_recorded(tmp_path):
    path = tmp_path / "m.db"
    async with Store.open(path) as store:
        async with store.conn.execute("SELECT name FROM _migrations") as cur:
            names = {r[0] for r in await cur.fetchall()}
    assert {"notebook_001_create", "memory_001_create", "calendar_001_create", "files_001_create"} <= names
    assert names == {n for n, _ in all_migrations()}
    async with Store.open(path) as store:  # reopening applies nothing new and keeps the data
        async with store.conn.execute("SELECT count(*) FROM _migrations") as cur:
            assert (await cur.fetchone())[0] == len(names)
        async with store.conn.execute("PRAGMA journal_mode") as cur:
            assert (await cur.fetchone())[0] == "wal"


async def test_notebook_add_get_remove_and_fts_stays_in_sync(store):
    note = await store.notebook.add("fact", "Bike lock", "The bike lock code is 4417.", "2026-01-02")
    assert (await store.notebook.get(note.id)).body == "The bike lock code is 4417."
    assert [n.id for n in await store.notebook.search("lock code")] == [note.id]
    updated, created = await store.notebook.upsert("fact", "Bike lock", "The new padlock code is 9902.", "2026-02-01")
    assert (updated.id, created) == (note.id, False)
    assert await store.notebook.search("4417") == []
    assert [n.body for n in await store.notebook.search("padlock")] == ["The new padlock code is 9902."]
    assert await store.notebook.remove(note.id) is True
    assert await store.notebook.remove(note.id) is False
    assert await store.notebook.search("padlock") == []


async def test_notebook_rejects_unknown_kind(store):
    with pytest.raises(ValueError, match="kind"):
        await store.notebook.add("gossip", "t", "b", "2026-01-01")


async def _filler(store, n: int = 8) -> None:
    # bm25's IDF is ~0 in a two-row table; a few unrelated notes make it a realistic corpus.
    for i in range(n):
        await store.notebook.add("fact", f"Filler {i}", f"Unrelated note number {i} about gardening.", "2025-06-01")


async def test_notebook_ranking_title_beats_body_and_recency_breaks_ties(store):
    await _filler(store)
    await store.notebook.add("digest", "Weekend plans", "Might see the dentist friend Anjali for lunch.", "2026-03-01")
    person = await store.notebook.add("person", "Anjali Rao (dentist)",
                                      "Works at the hillside practice; phone 0117 496 0218; likes tea, "
                                      "cycling, long walks and board games with her two nephews.", "2026-01-01")
    assert (await store.notebook.search("dentist"))[0].id == person.id
    old = await store.notebook.add("fact", "Boiler service", "Boiler serviced by Wojcik.", "2025-01-01")
    new = await store.notebook.add("fact", "Boiler service", "Boiler serviced by Wojcik.", "2026-06-01")
    assert [n.id for n in await store.notebook.search("boiler")] == [new.id, old.id]


async def test_notebook_search_normalises_case_accents_and_plurals(store):
    note = await store.notebook.add("person", "Lucía Fernández (manager)", "Keeps all receipts for expenses.", "2026-01-01")
    for query in ("fernandez", "FERNÁNDEZ", "receipt", "Receipts", "expense", "manag", "expensed", "managing"):
        assert [n.id for n in await store.notebook.search(query)] == [note.id], query


async def test_notebook_recent_browses_newest_first(store):
    for day in ("2026-01-05", "2026-03-01", "2026-02-10"):
        await store.notebook.add("fact", f"note {day}", "x", day)
    assert [n.updated for n in await store.notebook.recent(2)] == ["2026-03-01", "2026-02-10"]
    assert await store.notebook.search("   ") == []


async def test_memory_dedupes_identical_entries_and_requires_an_offset(store):
    assert await store.memory.add("call", "Mum", "2026-03-01T18:00:00+00:00", "Talked about the allotment.") is True
    # The same instant written with another offset is the same entry.
    assert await store.memory.add("call", "Mum", "2026-03-01T19:00:00+01:00", "Talked about the allotment.") is False
    assert await store.memory.count() == 1
    with pytest.raises(ValueError, match="offset"):
        await store.memory.add("call", "Mum", "2026-03-01T18:00:00", "x")
    with pytest.raises(ValueError, match="kind"):
        await store.memory.add("letter", "Mum", "2026-03-01T18:00:00+00:00", "x")


async def test_memory_search_matches_word_forms_and_newer_wins_a_tie(store):
    await store.memory.add("journal", "me", "2026-01-01T10:00:00+00:00", "The kiln was hotter than usual today.")
    await store.memory.add("post", "me", "2026-01-02T10:00:00+00:00", "Best hot chocolate in town at the cafe.")
    await store.memory.add("chat", "Callum", "2026-02-01T10:00:00+00:00", "Allotment onions are in.")
    await store.memory.add("chat", "Callum", "2026-03-01T10:00:00+00:00", "Allotment onions are in.")
    hits = await store.memory.search("hot")
    assert [h.text for h in hits] == ["Best hot chocolate in town at the cafe."]  # "hotter" is another word
    await store.memory.add("journal", "me", "2026-04-01T10:00:00+00:00", "Swam forty lengths before work.")
    await store.memory.add("journal", "me", "2026-04-02T10:00:00+00:00", "Went running by the river.")
    assert [h.text[:4] for h in await store.memory.search("swimming")] == ["Swam"]
    assert [h.text[:4] for h in await store.memory.search("run")] == ["Went"]
    assert [h.text[:4] for h in await store.memory.search("ran")] == ["Went"]
    assert [e.when for e in await store.memory.search("allotment onions")] == [
        "2026-03-01T10:00:00+00:00", "2026-02-01T10:00:00+00:00"]
    assert [e.who for e in await store.memory.search("callum")][:1] == ["Callum"]
    assert await store.memory.search("zeppelin") == []


async def test_a_migration_that_reads_then_writes_is_not_locked_out_by_another_writer(tmp_path, monkeypatch):
    """A deferred BEGIN reads a snapshot; if another connection commits before its first write,
    SQLite refuses the upgrade at once ("database is locked", no busy wait): the second of three
    connections opened at start would fail. Migrations take the write lock first (BEGIN IMMEDIATE)."""
    import asyncio
    import sqlite3
    import threading

    from edge_agent.store import db

    path = tmp_path / "m.db"
    await (await db.connect(path)).close()
    other_wrote, read_done = threading.Event(), threading.Event()

    async def reads_then_writes(conn):
        async with conn.execute("SELECT count(*) FROM _migrations") as cur:
            await cur.fetchone()
        read_done.set()
        await asyncio.to_thread(other_wrote.wait, 0.5)  # the other writer commits here, if it can
        await conn.execute("CREATE TABLE late (x)")

    def other_writer() -> None:
        read_done.wait(5)
        with sqlite3.connect(path, timeout=5) as other:
            other.execute("CREATE TABLE IF NOT EXISTS other (x)")
            other.execute("INSERT INTO other VALUES (1)")
        other_wrote.set()

    monkeypatch.setattr(db, "all_migrations", lambda: [("test_reads_then_writes", reads_then_writes)])
    writer = asyncio.create_task(asyncio.to_thread(other_writer))
    conn = await db.connect(path)
    await writer
    try:
        async with conn.execute("SELECT name FROM _migrations") as cur:
            assert "test_reads_then_writes" in {r[0] for r in await cur.fetchall()}
        async with conn.execute("SELECT count(*) FROM other") as cur:
            assert (await cur.fetchone())[0] == 1  # the other writer waited its turn, then wrote
    finally:
        await conn.close()


async def test_memory_written_on_reads_the_days_as_logged_newest_first(store):
    await store.memory.add("message", "Zara", "2026-11-01T23:30:00+00:00", "late on the first")
    await store.memory.add("message", "Zara", "2026-11-02T00:30:00+01:00", "just after midnight, summer time")
    await store.memory.add("call", "Eli", "2026-11-01T09:00:00+00:00", "morning call")
    await store.memory.add("post", "Nadia", "2026-10-31T12:00:00+00:00", "the day before")
    texts = [e.text for e in await store.memory.written_on("2026-11-01", "2026-11-01")]
    assert texts == ["late on the first", "morning call"]  # the day in the entry's own zone
    assert len(await store.memory.written_on("2026-10-31", "2026-11-02")) == 4
    assert await store.memory.written_on("2026-12-01", "2026-12-31") == []
