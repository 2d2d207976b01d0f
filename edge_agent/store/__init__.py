"""Storage: one SQLite file through aiosqlite; each module owns its tables and migrations.

`Store` (store/api.py) is the facade tools and commands use: store.conn plus store.notebook,
store.memory, store.calendar and store.files.
"""


def __getattr__(name: str):
    # Imported lazily so `import edge_agent.store.db` stays light and free of import cycles.
    if name == "Store":
        from edge_agent.store.api import Store

        return Store
    raise AttributeError(name)
