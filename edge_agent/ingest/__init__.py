"""Getting the user's data in: notebook and memory JSONL, iCalendar files, folders, the sample world.

Every importer reads what it can: a bad record becomes one reject line ("file:line: why") and the
rest still land. Importers are idempotent, so running one twice adds nothing the second time.
"""
