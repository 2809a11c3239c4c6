from __future__ import annotations

from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.session_queries import list_messages
from axiom.ingest.transcript import Message, ToolCall, Transcript
from axiom.store.db import Database


def test_nothing_private_reaches_the_store(db: Database) -> None:
    secret = "sk-ant-api03-" + "a" * 40
    transcript = Transcript(
        session_id="p1",
        project="demo",
        source="json",
        title="keys <private>hunter2</private>",
        messages=(
            Message(0, "user", f"my key is {secret} and <private>my diary</private> ok"),
            Message(
                1,
                "assistant",
                "calling",
                tool_calls=(ToolCall("t", "Bash", {"command": f"export KEY={secret}"}),),
                meta={"thinking": "password=hunter22 should not leak"},
            ),
        ),
    )
    ingest_transcripts(db, [transcript])
    with db.read() as conn:
        raw = conn.execute("SELECT string_agg(payload_json::VARCHAR, '') FROM events").fetchone()[0]
        rows = list_messages(conn, "p1")
        meta = conn.execute("SELECT meta_json FROM sessions").fetchone()[0]
    for leaked in (secret, "my diary", "hunter2"):
        assert leaked not in raw
    assert rows[0].text.startswith("my key is [SECRET:") and "[PRIVATE]" in rows[0].text
    assert "[SECRET:" in rows[1].tool_calls[0]["input"]["command"]
    assert '"private_tag": 2' in meta
