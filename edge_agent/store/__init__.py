"""Storage: one SQLite file through aiosqlite; each module owns its tables and migrations."""
