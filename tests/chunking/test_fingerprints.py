"""Fingerprints, settings, model_copy, tokenizers and deterministic ids."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from uuid import UUID

import pytest
from pydantic import ValidationError

import chunking.versions as versions
from chunking import (
    Chunk,
    Document,
    PageProvenance,
    ParentChildChunker,
    RecursiveChunker,
    SectionChunker,
    TextProvenance,
    TokenizerError,
    TurnWindowChunker,
    chunker_from_settings,
    load_tokenizer,
)
from chunking.ids import CHUNK_NAMESPACE, stable_uuid

CHUNKERS = [
    RecursiveChunker(chunk_size=128, tokenizer="character"),
    SectionChunker(chunk_size=256, min_size=10),
    TurnWindowChunker(chunk_size=300, turn_overlap=1),
    ParentChildChunker(parent=SectionChunker(chunk_size=512), child=RecursiveChunker(chunk_size=128)),
]

PROBE = """
import json, sys
from chunking import chunker_from_settings, Document, ParentChildChunker
spec = json.loads(sys.argv[1])
chunker = chunker_from_settings(spec)
doc = Document.from_text("One paragraph.\\n\\nAnother paragraph, longer than the first.", source_uri="mem://p")
print(json.dumps({"fp": chunker.fingerprint(), "ids": [str(c.id) for c in chunker.chunk(doc)]}))
"""


def spec_of(chunker: object) -> dict:
    settings = chunker.settings()

    def plain(data: dict) -> dict:
        out = {k: v for k, v in data.items() if k not in {"versions", "tokenizer"}}
        if "tokenizer" in data:
            out["tokenizer"] = data["tokenizer"]["name"]
        return {k: plain(v) if isinstance(v, dict) and "strategy" in v else v for k, v in out.items()}

    return plain(settings)


@pytest.mark.parametrize("chunker", CHUNKERS, ids=lambda c: c.strategy)
def test_fingerprint_is_16_hex_and_equal_in_another_process(chunker: object) -> None:
    fingerprint = chunker.fingerprint()
    assert len(fingerprint) == 16 and int(fingerprint, 16) >= 0
    doc = Document.from_text(
        "One paragraph.\n\nAnother paragraph, longer than the first.", source_uri="mem://p"
    )
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(spec_of(chunker))],
        capture_output=True,
        text=True,
        check=True,
    )
    other = json.loads(out.stdout)
    assert other["fp"] == fingerprint
    assert other["ids"] == [str(c.id) for c in chunker.chunk(doc)]


@pytest.mark.parametrize("chunker", CHUNKERS, ids=lambda c: c.strategy)
def test_plain_model_copy_keeps_fingerprint(chunker: object) -> None:
    assert chunker.model_copy().fingerprint() == chunker.fingerprint()


def test_changed_setting_changes_fingerprint_and_is_validated() -> None:
    base = SectionChunker(chunk_size=256)
    assert base.model_copy(update={"chunk_size": 300}).fingerprint() != base.fingerprint()
    assert base.model_copy(update={"tokenizer": "o200k_base"}).fingerprint() != base.fingerprint()
    with pytest.raises(ValidationError):
        base.model_copy(update={"chunk_size": -1})
    with pytest.raises(ValidationError):
        SectionChunker(chunk_size=256, colour="blue")


def test_settings_include_tokenizer_identity_and_versions() -> None:
    settings = TurnWindowChunker(chunk_size=300).settings()
    assert settings["strategy"] == "turn-window"
    assert settings["tokenizer"]["name"] == "cl100k_base" and settings["tokenizer"]["tiktoken"]
    assert settings["fallback"]["strategy"] == "recursive" and settings["fallback"]["versions"]["chonkie"]
    json.dumps(settings)  # JSON-safe


@pytest.mark.parametrize(
    ("constant", "chunker"),
    [
        ("SPLITTER_VERSION", RecursiveChunker(chunk_size=64)),
        ("SECTION_PACKER_VERSION", SectionChunker(chunk_size=256)),
        ("TABLE_RENDERING_VERSION", SectionChunker(chunk_size=256)),
        ("TURN_WINDOW_VERSION", TurnWindowChunker(chunk_size=64)),
        (
            "SPLITTER_VERSION",
            ParentChildChunker(parent=SectionChunker(chunk_size=256), child=RecursiveChunker()),
        ),
    ],
)
def test_version_bump_changes_fingerprint(
    constant: str, chunker: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = chunker.fingerprint()
    monkeypatch.setattr(versions, constant, "bumped")
    assert chunker.fingerprint() != before


def test_tokenizer_version_change_changes_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    chunker = SectionChunker(chunk_size=256)
    before = chunker.fingerprint()
    monkeypatch.setitem(chunker._tokenizer.identity, "tiktoken", "99.0")
    assert chunker.fingerprint() != before


def test_unknown_tokenizer_fails_fast_listing_names() -> None:
    started = time.monotonic()
    with pytest.raises(
        ValidationError, match=r"tokenizer\n.*use one of: character, word, cl100k_base, o200k_base"
    ):
        SectionChunker(chunk_size=256, tokenizer="bert-base-uncased")
    assert time.monotonic() - started < 1.0
    with pytest.raises(TokenizerError):
        load_tokenizer("bert-base-uncased")


def test_bpe_tokenizers_count_special_token_text_as_text() -> None:
    for name in ("cl100k_base", "o200k_base"):
        assert load_tokenizer(name).count("<|endoftext|>") > 1


def test_chunker_from_settings_rejects_unknown_strategy() -> None:
    with pytest.raises(ValueError, match="unknown chunker strategy 'fancy'"):
        chunker_from_settings({"strategy": "fancy"})
    nested = chunker_from_settings(
        {"strategy": "turn-window", "fallback": {"strategy": "recursive", "chunk_size": 64}}
    )
    assert nested.fallback.chunk_size == 64


# Ids stored by earlier runs: the formula must never move without a version bump, or a store
# would see every chunk as new. (document, version, provenance, index, chunker hash, level,
# text, occurrence) -> the id it had. Issue 31 moved it twice, with the strategies' versions: a
# text chunk's id left out the version and covered the text (the second row was "b4439647-..."
# with its version; without a text, a text chunk keeps the id it had without a version, the first
# row), then left out the span, naming the text's occurrence instead (the fourth and fifth rows
# were "f7fb19bd-..." and "edc5d463-...", with their spans).
_DOC = UUID("6f1c2a4e-9b0d-5e3a-8c71-2d4b6a8e0f13")
_VERSION = UUID("0b7d9e21-4c6a-5f80-9d12-7e3f5a1b2c48")
_T, _P = TextProvenance, PageProvenance
_STORED_IDS = [
    ((_DOC, None, _T(start=0, end=10), 0, None, 0, None, 0), "df9d7b2e-3e63-590b-8fe3-0b485d05e09a"),
    ((_DOC, _VERSION, _T(start=5, end=900), 3, None, 1, None, 0), "882fb1ac-9718-5eca-a5a0-6f87cf9db0a1"),
    ((_DOC, None, _T(start=5, end=900), 3, None, 1, None, 0), "882fb1ac-9718-5eca-a5a0-6f87cf9db0a1"),
    (
        (_DOC, _VERSION, _T(start=0, end=10), 0, None, 0, "Ten chars.", 0),
        "93ac72ba-39d0-5220-bc8a-d01e6919d5a2",
    ),
    (
        (_DOC, None, _T(start=5, end=900), 3, None, 1, "Größe \x1f 🙂", 0),
        "ad77637e-7e69-5712-a58a-bb62046dcffe",
    ),
    (
        (_DOC, None, _T(start=5, end=900), 3, None, 1, "Größe \x1f 🙂", 2),
        "6d232359-847f-5270-a371-2c111f626e1d",
    ),
    ((_DOC, _VERSION, _P(pages=(2,)), 7, "abc123", 0, None, 0), "690872c1-0aa7-5e01-830a-a81bfef26b40"),
    ((_DOC, _VERSION, _P(pages=(2,)), 7, "abc123", 0, "any", 0), "690872c1-0aa7-5e01-830a-a81bfef26b40"),
    ((_DOC, None, _P(pages=(1,)), 0, None, 1, None, 0), "0af9bab5-a5b3-5af7-9ed9-9c1112f93474"),
]


@pytest.mark.parametrize(("parts", "stored"), _STORED_IDS)
def test_chunk_ids_are_the_ids_earlier_runs_stored(parts: tuple, stored: str) -> None:
    document_id, version_id, provenance, index, chunker_hash, level, text, occurrence = parts
    made = Chunk.id_for(
        document_id=document_id,
        version_id=version_id,
        provenance=provenance,
        index=index,
        chunker_hash=chunker_hash,
        level=level,
        text=text,
        occurrence=occurrence,
    )
    assert str(made) == stored
    # The per-document maker the chunkers use gives the same id.
    make = Chunk.ids_for(document_id, version_id, chunker_hash)
    assert make(provenance, index, level, text, occurrence) == made
    # A text chunk's id is the uuid5 of its parts, the text last (chunking.ids.stable_uuid).
    if isinstance(provenance, TextProvenance):
        if text is None:
            parts = [document_id, provenance.start, provenance.end, *(["level", level] if level else [])]
        else:
            parts = [document_id, *(["level", level] if level else [])]
            parts += [*(["occurrence", occurrence] if occurrence else []), "text", text]
        assert made == stable_uuid(CHUNK_NAMESPACE, *parts)


def test_chunk_ids_follow_the_id_rules() -> None:
    doc_id = Document.node_id_for("file:///a.md")
    assert doc_id == Document.node_id_for("file:///a.md") != Document.node_id_for("file:///b.md")
    span = TextProvenance(start=0, end=10)
    child = Chunk.id_for(document_id=doc_id, provenance=span, index=0)
    assert child == Chunk.id_for(document_id=doc_id, provenance=span, index=5, chunker_hash="x")
    assert child != Chunk.id_for(document_id=doc_id, provenance=span, index=0, level=1)
    assert child != Chunk.id_for(document_id=doc_id, provenance=TextProvenance(start=0, end=11), index=0)
