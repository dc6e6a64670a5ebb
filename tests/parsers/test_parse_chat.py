"""Chat parser: JSON and JSON Lines turns laid out like Document.from_turns."""

from __future__ import annotations

import json
from pathlib import Path

from chunking.document import Document
from chunking.parsers import parse_bytes, parse_file
from tests.parsers.conftest import assert_exact_offsets


def test_chat_json_matches_from_turns_layout(sample_dir: Path) -> None:
    path = sample_dir / "chat-allotment.json"
    payload = json.loads(path.read_text("utf-8"))
    document = parse_file(path)
    expected = Document.from_turns(
        [(t["speaker"], t["text"]) for t in payload["turns"]], source_uri=document.source_uri
    )
    assert document.text == expected.text
    assert document.turns == expected.turns
    assert document.sections == expected.sections
    assert document.title == "Planning the allotment"
    assert document.metadata["speakers"] == ["Mara", "Tomas"]
    assert document.metadata["meta"]["language"] == "en"
    for turn in document.turns or ():
        assert document.text[turn.start : turn.end].startswith(f"{turn.speaker}: ")


def test_chat_multi_party_keeps_long_turn_whole(sample_dir: Path) -> None:
    document = parse_file(sample_dir / "chat-ops-incident.json")
    assert len(document.turns or ()) == 7
    long_turn = max(document.turns or (), key=lambda t: t.end - t.start)
    assert long_turn.speaker == "bo"
    assert "\n\nWhat we agreed" in document.text[long_turn.start : long_turn.end]
    assert_exact_offsets(document)


def test_chat_json_lines_parse_as_turns() -> None:
    raw = b'{"speaker": "a", "text": "hi"}\n{"speaker": "b", "text": "hello"}\n'
    document = parse_bytes(raw, kind="chat", source_uri="mem://c.jsonl")
    assert document.text == "a: hi\n\nb: hello"
    assert [t.speaker for t in document.turns or ()] == ["a", "b"]
    assert document.metadata["layout"] == "jsonl"
