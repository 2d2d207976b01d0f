"""The Store facade: one open database with a repository per table group.

    async with Store.open(settings.db_path) as store:
        notes = await store.notebook.search("dentist")
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import AsyncIterator

import aiosqlite

from edge_agent.store.db import connect
from edge_agent.store.events import CalendarRepo
from edge_agent.store.files import FileIndexRepo
from edge_agent.store.memory import MemoryRepo
from edge_agent.store.notebook import NotebookRepo
from edge_agent.store.synonyms import use_user_synonyms


class Store:
    """The user's data in one SQLite file; tools receive it as ToolContext.store."""

    def __init__(self, conn: aiosqlite.Connection, path: Path | None = None):
        self.conn = conn
        self.path = path
        self.notebook = NotebookRepo(conn)
        self.memory = MemoryRepo(conn)
        self.calendar = CalendarRepo(conn)
        self.files = FileIndexRepo(conn)

    @classmethod
    async def connect(cls, path: Path) -> "Store":
        """Open (creating and migrating) the database; the caller must `await store.close()`."""
        use_user_synonyms(Path(path).parent)  # the user's own synonyms live in the data dir
        return cls(await connect(Path(path)), Path(path))

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, path: Path) -> AsyncIterator["Store"]:
        """`async with Store.open(path) as store:` — closed on exit."""
        store = await cls.connect(path)
        try:
            yield store
        finally:
            await store.close()

    async def close(self) -> None:
        await self.conn.close()
