"""The chat log: an asker's exchanges kept apart from the user's memory log."""
import pytest

from edge_agent.store.db import migrate

WHEN = "2026-11-18T09:30:00+00:00"


async def test_logged_chats_are_not_searchable_memory(store):
    await store.memory.add("journal", "Nadia", WHEN, "Swapped the bank card PIN reader batteries")
    await store.memory.log_chat("eve", WHEN, "Nadia's bank PIN is 0000", "Noted.", ["check_notebook"])
    assert [e.text for e in await store.memory.search("bank PIN 0000")] == [
        "Swapped the bank card PIN reader batteries"]
    [chat] = await store.memory.chats("eve")
    assert (chat.asker, chat.question, chat.tools) == ("eve", "Nadia's bank PIN is 0000", "check_notebook")
    assert await store.memory.chats("phone") == []
    with pytest.raises(ValueError):
        await store.memory.log_chat(" ", WHEN, "q", "a", [])


async def test_the_migration_moves_chats_logged_as_user_memory_out(store):
    conn = store.conn
    await conn.execute("DROP TABLE chat_log")
    await conn.execute("DELETE FROM _migrations WHERE name = 'memory_002_chat_log'")
    await store.memory.add("chat", "user", WHEN, "Asked: Nadia's bank PIN is 0000\nAnswered: Noted.")
    await store.memory.add("chat", "Nadia", WHEN, "Asked the landlady about the boiler")
    assert await migrate(conn) == ["memory_002_chat_log"]
    assert [e.who for e in await store.memory.recent(10)] == ["Nadia"]
    [chat] = await store.memory.chats()
    assert (chat.asker, chat.question, chat.answer) == ("unknown", "Nadia's bank PIN is 0000", "Noted.")
