"""Golden files: the chunks of a few sample documents, checked in as JSON.

Regenerate after an intended change with ``UPDATE_GOLDEN=1 pytest tests/chunking/test_golden.py``
and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chunking import (
    ParentChildChunker,
    RecursiveChunker,
    SectionChunker,
    TurnWindowChunker,
    guess_kind,
    parse_bytes,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = [
    "getting-started.md",
    "field-notes.html",
    "orchard-harvest.csv",
    "orchard-report.pdf",
    "chat-allotment.json",
]


def leveler_for(kind: str) -> ParentChildChunker:
    if kind == "chat":
        return ParentChildChunker(
            parent=TurnWindowChunker(chunk_size=200), child=RecursiveChunker(chunk_size=64)
        )
    return ParentChildChunker(parent=SectionChunker(chunk_size=200), child=SectionChunker(chunk_size=64))


def snapshot(name: str) -> list[dict]:
    data = (SAMPLE / name).read_bytes()
    document = parse_bytes(data, kind=guess_kind(SAMPLE / name, data[:4096]), source_uri=f"sample://{name}")
    return [
        {
            "level": c.level,
            "index": c.index,
            "id": str(c.id),
            "parent_id": str(c.parent_id) if c.parent_id else None,
            "chunker": c.chunker,
            "content_kind": c.content_kind,
            "heading_path": c.heading_path,
            "provenance": c.provenance.model_dump(mode="json"),
            "token_count": c.metadata["token_count"],
            "text": c.text,
        }
        for c in leveler_for(document.kind).chunk(document)
    ]


@pytest.mark.parametrize("name", FILES)
def test_golden_chunks_of_sample_documents(name: str) -> None:
    path = GOLDEN / f"{name}.json"
    actual = snapshot(name)
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert actual == expected
