"""Fixtures: real documents from ../shared/corpus when present (read as plain text or chat)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chunking import Document

CORPUS = Path(os.environ.get("INGEST_CORPUS", Path(__file__).resolve().parents[3] / "shared" / "corpus"))
# The default suite takes a spread of small and mid-size files; the slow suite takes them all.
DEFAULT_LIMIT = 60_000


def corpus_files(kinds: tuple[str, ...], limit: int | None) -> list[Path]:
    if not CORPUS.is_dir():
        return []
    files = sorted(p for kind in kinds for p in (CORPUS / kind).glob("*") if p.is_file())
    return [p for p in files if limit is None or p.stat().st_size <= limit]


def load_plain(path: Path) -> Document:
    if path.parent.name == "chat":
        data = json.loads(path.read_text(encoding="utf-8"))
        turns = [(t["speaker"], t["text"]) for t in data["turns"]]
        return Document.from_turns(turns, source_uri=path.as_uri(), title=data.get("title", ""))
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return Document.from_text(text, source_uri=path.as_uri(), kind=path.parent.name)


def _load_corpus(limit: int | None, every: int) -> list[Document]:
    files = corpus_files(("markdown", "text", "chat", "csv", "html"), limit)
    if not files:
        pytest.skip(f"no corpus at {CORPUS}")
    return [load_plain(p) for p in files[::every]]


@pytest.fixture(scope="session")
def corpus_documents() -> list[Document]:
    """A spread of about a dozen small and mid-size corpus files, for the default suite."""
    files = corpus_files(("markdown", "text", "chat", "csv", "html"), DEFAULT_LIMIT)
    return _load_corpus(DEFAULT_LIMIT, max(1, len(files) // 12))


@pytest.fixture(scope="session")
def whole_corpus_documents() -> list[Document]:
    """Every markdown, text, chat, CSV and HTML file of the corpus, read as plain text or chat."""
    return _load_corpus(None, 1)
