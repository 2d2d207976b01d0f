"""Importing notebook and memory-log JSON Lines files."""
from __future__ import annotations

from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from edge_agent.ingest.jsonl import count_records, records
from edge_agent.ingest.report import ImportReport, Progress
from edge_agent.store.memory import MemoryKind, parse_when
from edge_agent.store.notebook import NoteKind
from edge_agent.store.sql import transaction

MAX_TITLE_CHARS = 200  # a notebook title is a heading, not a paragraph
MAX_TEXT_CHARS = 20_000  # one note body or memory entry


class NoteLine(BaseModel):
    """One line of notebook.jsonl."""

    model_config = ConfigDict(extra="ignore")

    kind: NoteKind
    """fact | person | instruction | digest."""
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    """Short title; a person's name for a person page."""
    body: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    """The note."""
    updated: date
    """Last change, YYYY-MM-DD."""


class MemoryLine(BaseModel):
    """One line of memory.jsonl."""

    model_config = ConfigDict(extra="ignore")

    kind: MemoryKind
    """chat | journal | post | message | call."""
    who: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    """Who it was with or from."""
    when: str
    """ISO 8601 date-time with UTC offset."""
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    """What was said or written."""

    @field_validator("when")
    @classmethod
    def _aware(cls, value: str) -> str:
        parse_when(value)
        return value


async def import_notebook(repo, path: Path, progress: Progress | None = None) -> ImportReport:
    """Upsert every good line of a notebook JSONL file (same kind + title replaces)."""
    report = ImportReport(source=str(path))
    total = count_records(path)
    async with transaction(repo.conn):
        for done, (_, note) in enumerate(records(path, NoteLine, report.rejects), 1):
            title, updated = note.title.strip(), note.updated.isoformat()
            before = await repo.find(note.kind, title)
            await repo.upsert(note.kind, title, note.body, updated)
            if before is None:
                report.added += 1
            elif (before.body, before.updated) == (note.body, updated):
                report.unchanged += 1
            else:
                report.updated += 1
            if progress:
                progress(done + len(report.rejects), total)
    return report


async def import_memory(repo, path: Path, progress: Progress | None = None) -> ImportReport:
    """Append every good line of a memory JSONL file; identical entries are not added twice."""
    report = ImportReport(source=str(path))
    total = count_records(path)
    async with transaction(repo.conn):
        for done, (_, entry) in enumerate(records(path, MemoryLine, report.rejects), 1):
            if await repo.add(entry.kind, entry.who.strip(), entry.when, entry.text):
                report.added += 1
            else:
                report.unchanged += 1
            if progress:
                progress(done + len(report.rejects), total)
    return report
