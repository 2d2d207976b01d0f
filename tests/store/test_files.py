"""The file index: incremental indexing, text extraction (txt, md, pdf), rejects and ranking."""
import os

import pytest

from edge_agent.store.files import index_paths, search_files


@pytest.fixture
def home(tmp_path, write_pdf):
    root = tmp_path / "Documents"
    (root / "Bills").mkdir(parents=True)
    (root / "Bills" / "electricity-2026-03.txt").write_text("Wyvern Energy. Amount due 64.18 GBP.", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\nThe electricity meter is in the hall cupboard.", encoding="utf-8")
    write_pdf(root / "Resume.pdf", ["Nadia Ferris", "nadia@example.org", "Senior Survey Planner"])
    (root / "Photos").mkdir()
    (root / "Photos" / "IMG_0042.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    (root / ".hidden").write_text("secret", encoding="utf-8")
    return root


async def test_index_extracts_text_and_searches_name_path_kind_and_body(store, home):
    report = await index_paths(store.conn, "pi", [home])
    assert (report.scanned, report.indexed, report.unchanged, report.removed, report.rejects) == (4, 4, 0, 0, [])
    hits = await search_files(store.conn, "resume email")
    assert hits[0]["name"] == "Resume.pdf" and "nadia@example.org" in hits[0]["excerpt"]
    assert set(hits[0]) == {"device", "path", "name", "kind", "size", "mtime", "excerpt", "snippet", "passages",
                            "matched", "strength", "score"}
    assert (hits[0]["matched"], hits[0]["strength"]) == (["resume"], "all")  # "email" asks for a value
    assert hits[0]["device"] == "pi" and hits[0]["kind"] == "document" and hits[0]["path"] == str(home / "Resume.pdf")
    # The file named for electricity (and in Bills) beats the note that merely mentions it.
    assert [h["name"] for h in await search_files(store.conn, "electricity")][:2] == [
        "electricity-2026-03.txt", "notes.md"]
    assert (await search_files(store.conn, "bills march"))[0]["name"] == "electricity-2026-03.txt"
    photo = (await search_files(store.conn, "photo"))[0]
    assert (photo["name"], photo["kind"], photo["excerpt"]) == ("IMG_0042.jpg", "image", "")
    assert await search_files(store.conn, "secret") == []
    assert await search_files(store.conn, "zeppelin") == []


async def test_indexing_is_incremental_by_mtime_and_drops_deleted_files(store, home):
    await index_paths(store.conn, "pi", [home])
    again = await index_paths(store.conn, "pi", [home])
    assert (again.indexed, again.unchanged) == (0, 4)
    note = home / "notes.md"
    note.write_text("# Notes\nThe gas meter is outside.", encoding="utf-8")
    os.utime(note, (note.stat().st_atime, note.stat().st_mtime + 10))
    (home / "Photos" / "IMG_0042.jpg").unlink()
    third = await index_paths(store.conn, "pi", [home])
    assert (third.indexed, third.unchanged, third.removed) == (1, 2, 1)
    assert [h["name"] for h in await search_files(store.conn, "gas meter")] == ["notes.md"]
    assert await search_files(store.conn, "photo") == []


async def test_unreadable_pdf_is_reported_and_the_rest_still_land(store, home):
    (home / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf at all")
    report = await index_paths(store.conn, "pi", [home])
    assert report.indexed == 5 and len(report.rejects) == 1
    assert report.rejects[0].startswith(f"{home / 'broken.pdf'}:") and "unreadable PDF" in report.rejects[0]
    assert (await search_files(store.conn, "broken"))[0]["name"] == "broken.pdf"  # still findable by name
    assert (await search_files(store.conn, "resume"))[0]["name"] == "Resume.pdf"


async def test_missing_root_is_a_reject_not_a_crash_and_keeps_its_old_rows(store, home, tmp_path):
    report = await index_paths(store.conn, "pi", [tmp_path / "nope", home])
    assert report.indexed == 4 and report.rejects == [f"{tmp_path / 'nope'}: not a folder"]
    moved = tmp_path / "unplugged"
    home.rename(moved)
    again = await index_paths(store.conn, "pi", [home])  # the root is gone for now: nothing is dropped
    assert (again.removed, again.rejects) == (0, [f"{home}: not a folder"])
    assert (await search_files(store.conn, "resume"))[0]["name"] == "Resume.pdf"


async def test_unreadable_folder_is_reported_and_the_rest_still_land(store, home, monkeypatch):
    locked = home / "Private"
    locked.mkdir()
    (locked / "diary.txt").write_text("dear diary", encoding="utf-8")
    real_scandir = os.scandir

    def scandir(path="."):
        # Permissions cannot lock out root (these tests may run as root), so refuse the folder here.
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    report = await index_paths(store.conn, "pi", [home])
    assert report.indexed == 4
    assert report.rejects == [f"{locked}: cannot read folder: Permission denied"]


async def test_devices_filter_and_device_registry(store, home, tmp_path):
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    (laptop / "electricity-2025-12.txt").write_text("Old bill", encoding="utf-8")
    await index_paths(store.conn, "pi", [home])
    await index_paths(store.conn, "laptop", [laptop])
    assert {h["device"] for h in await search_files(store.conn, "electricity")} == {"pi", "laptop"}
    assert {h["device"] for h in await search_files(store.conn, "electricity", ["laptop"])} == {"laptop"}
    assert await store.files.devices() == [{"id": "laptop", "name": "laptop"}, {"id": "pi", "name": "pi"}]
    await store.files.register_device("laptop", "Nadia's laptop")
    await store.files.register_device("laptop")  # no name: keeps the one it has
    assert (await store.files.devices())[0] == {"id": "laptop", "name": "Nadia's laptop"}
