"""``Chunk.metadata`` keeps to its contract (:class:`chunking.chunk_metadata.ChunkMetadata`):
every key a chunker sets is declared, with its type, and the library reads no other key."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from chunking import (
    ChunkMetadata,
    Document,
    ParentChildChunker,
    RecursiveChunker,
    SectionChunker,
    TurnWindowChunker,
    parse_file,
)
from chunking.chunk_metadata import METADATA_KEYS

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
# Where Chunk.metadata is set or read; Document.metadata (a parser's facts) is another dict.
SOURCES = [*sorted((ROOT / "chunking" / "chunkers").glob("*.py")), ROOT / "chunking" / "chunk.py"]
SOURCES += [ROOT / "chunking" / "inspect.py", ROOT / "chunking" / "integrations" / "common.py"]
SOURCES += [ROOT / "ingest_assets" / "engine" / "tasks.py"]

_STRICT = TypeAdapter(ChunkMetadata)


def _chunkers() -> list:
    tok = {"tokenizer": "character"}
    return [
        ParentChildChunker(
            parent=SectionChunker(chunk_size=600, **tok), child=SectionChunker(chunk_size=120, **tok)
        ),
        SectionChunker(chunk_size=80, overlap=20, **tok),
        ParentChildChunker(
            parent=TurnWindowChunker(chunk_size=300, **tok), child=RecursiveChunker(chunk_size=60, **tok)
        ),
    ]


@pytest.mark.parametrize("path", sorted(SAMPLE.iterdir()), ids=lambda p: p.name)
def test_every_key_a_chunker_sets_is_declared_with_its_type(path: Path) -> None:
    document = parse_file(path)
    chunks = [c for chunker in _chunkers() for c in chunker.chunk(document)]
    assert chunks
    for chunk in chunks:
        assert set(chunk.metadata) <= METADATA_KEYS, chunk.metadata
        assert _STRICT.validate_python(chunk.metadata, strict=True) == chunk.metadata
        assert isinstance(chunk.metadata["token_count"], int)


def test_a_callers_own_key_travels_with_the_chunk() -> None:
    document = Document.from_text("One paragraph.", source_uri="mem://m")
    (chunk,) = SectionChunker(chunk_size=64).chunk(document)
    copy = type(chunk).model_validate({**chunk.model_dump(), "metadata": {**chunk.metadata, "mine": [1]}})
    assert copy.metadata["mine"] == [1] and copy.metadata["token_count"] == chunk.metadata["token_count"]


def _keys_read_or_set(path: Path) -> set[str]:
    """String keys used on a ``<x>.metadata`` (or a ``metadata`` name) that is not a document's."""
    keys: set[str] = set()

    def is_chunk_metadata(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "metadata":
            return not (isinstance(node.value, ast.Name) and node.value.id in ("document", "self"))
        return isinstance(node, ast.Name) and node.id in ("metadata", "meta")

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Subscript) and is_chunk_metadata(node.value):
            key = node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            key = node.args[0] if is_chunk_metadata(node.func.value) and node.args else None
        elif isinstance(node, ast.Compare) and any(is_chunk_metadata(c) for c in node.comparators):
            key = node.left
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            keys.add(key.value)
    return keys


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_reads_and_sets_only_declared_keys(path: Path) -> None:
    own = {"chunk_id", "start_index", "end_index", "offsets_into_input", "parent_id"}  # integrations' dict
    assert _keys_read_or_set(path) - METADATA_KEYS - own == set()
