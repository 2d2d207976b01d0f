"""Passages: split at ingest, indexed, and the best ones answer for a file hit; the porter migration."""
from edge_agent.store.db import migrate
from edge_agent.store.files import index_paths, search_files
from edge_agent.store.passages import PASSAGE_MAX_CHARS, split_passages

LEASE = """Assured Shorthold Tenancy Agreement
Property: Flat 9, 3 Elm Row. Rent: 900 pounds per calendar month.
""" + "\n".join(f"1.{i} The tenant agrees to clause number {i} about ordinary things." for i in range(1, 30)) + """
2. Pets
The landlord allows one dog called Pepper.
3. Ending the tenancy
3.1 The tenant may end the tenancy by giving at least one month's notice in writing.
3.2 The landlord must give two months' notice.
"""


def test_passages_are_bounded_and_break_at_headings():
    parts = split_passages(LEASE)
    assert len(parts) > 3 and all(len(p) <= PASSAGE_MAX_CHARS for p in parts)
    # a short section ("2. Pets") takes the next heading along instead of standing alone
    assert any(p.startswith("2. Pets") and "3.1 The tenant may end" in p for p in parts)
    assert " ".join(parts).split() == LEASE.split()  # nothing lost, nothing added
    long_line = "word " * 400
    assert all(len(p) <= PASSAGE_MAX_CHARS for p in split_passages(long_line))
    assert split_passages("") == [] and split_passages("# Title\nshort body") == ["# Title\nshort body"]


async def test_a_hit_carries_its_best_passage_not_the_first_match(store, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "lease.txt").write_text(LEASE, encoding="utf-8")
    await index_paths(store.conn, "pi", [root])
    [hit] = await search_files(store.conn, "tenancy notice period")
    assert "one month's notice" in hit["excerpt"].split("\n…\n")[0]
    assert hit["matched"] == ["tenancy", "notice"] and hit["strength"] == "some"  # "period" is not in it
    [hit] = await search_files(store.conn, "dog Pepper")
    assert hit["excerpt"].startswith("2. Pets") and "Pepper" in hit["snippet"]
    [hit] = await search_files(store.conn, "lease")  # the word is not in it, its synonym "tenancy" is
    assert "Tenancy" in hit["excerpt"] and hit["strength"] == "all"


async def test_reindexing_a_changed_file_replaces_its_passages(store, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    doc = root / "note.md"
    doc.write_text("# Garden\nThe hose lives in the shed.", encoding="utf-8")
    await index_paths(store.conn, "pi", [root])
    doc.write_text("# Garden\nThe hose lives in the garage now.", encoding="utf-8")
    import os
    os.utime(doc, (1_900_000_000, 1_900_000_000))
    await index_paths(store.conn, "pi", [root])
    [hit] = await search_files(store.conn, "hose")
    assert "garage" in hit["excerpt"] and "shed" not in hit["excerpt"]
    rows = await (await store.conn.execute("SELECT count(*) FROM file_passages")).fetchone()
    assert rows[0] == 1
    doc.unlink()
    await index_paths(store.conn, "pi", [root])
    rows = await (await store.conn.execute("SELECT count(*) FROM file_passages")).fetchone()
    assert rows[0] == 0  # the file's passages went with it


async def test_the_porter_migrations_reindex_existing_rows(store):
    """A database from before stemming: rows indexed by the old tokenizer are found by word form after."""
    conn = store.conn
    await store.memory.add("journal", "me", "2026-01-01T10:00:00+00:00", "Swimming before work again.")
    await store.notebook.add("fact", "Running", "Runs on Mondays.", "2026-01-01")
    for name in ("memory_003_porter", "notebook_002_porter"):
        await conn.execute("DELETE FROM _migrations WHERE name = ?", (name,))
    from edge_agent.store.sql import rebuild_field_fts
    from edge_agent.store.text import FIRST_TOKENIZE
    await rebuild_field_fts(conn, "memory", ["who", "text"], FIRST_TOKENIZE)
    await rebuild_field_fts(conn, "notebook", ["title", "body"], FIRST_TOKENIZE)
    assert await store.memory.search("swim") == []  # the old index knows only "swimming"
    assert sorted(await migrate(conn)) == ["memory_003_porter", "notebook_002_porter"]
    assert [e.text for e in await store.memory.search("swim")] == ["Swimming before work again."]
    assert [n.title for n in await store.notebook.search("run")] == ["Running"]


async def test_a_hit_carries_its_three_best_passages(store, tmp_path):
    # A recipe names its dish in every section; the oven's heat is in one of them, and BM25 has no
    # reason to put that one in the first two.
    root = tmp_path / "docs"
    root.mkdir()
    filler = " ".join(["Take your time over this part of the plum tart."] * 8)
    text = "\n\n".join(f"## {name}\n{filler} {extra}" for name, extra in [
        ("Ingredients", "Plums, butter, flour."), ("Method", "Heat the oven to 180°C."),
        ("Notes", "It freezes well."), ("Serving", "Cut it into eight.")])
    assert len(split_passages(text)) == 4
    (root / "recipe-plum-tart.md").write_text(text, encoding="utf-8")
    await index_paths(store.conn, "pi", [root])
    [hit] = await search_files(store.conn, "plum tart")
    assert len(hit["excerpt"].split("\n…\n")) == 3 == len(hit["passages"])
