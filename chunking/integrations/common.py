"""What both wrappers share: a text to the project's chunks, and a chunk's metadata."""

from __future__ import annotations

from typing import Any

from chunking.chunk import Chunk
from chunking.chunkers.base import BaseChunker
from chunking.document import Document
from chunking.parsers import parse_bytes

__all__ = ["chunk_metadata", "chunk_text"]


def chunk_text(
    chunker: BaseChunker, text: str, *, kind: str, source_uri: str
) -> tuple[Document, list[Chunk]]:
    """Parse ``text`` as ``kind`` (``"text"``: paragraphs of the text as it is) and chunk it.

    For ``"text"`` the document text is ``text`` itself, so chunk offsets index the input; a
    parser of another kind lays the document out anew (Markdown, HTML), and offsets index that
    layout (``Document.text``), which the metadata says with ``offsets_into_input``.
    """
    if kind == "text":
        document = Document.from_text(text, source_uri=source_uri)
    else:
        document = parse_bytes(text.encode("utf-8"), kind=kind, source_uri=source_uri)
    return document, chunker.chunk(document)


def chunk_metadata(document: Document, chunk: Chunk, text: str) -> dict[str, Any]:
    """The chunk's place and labels as plain data: id, level, parent id, offsets, heading path,
    content kind, chunker and fingerprint, and the contextual text for embedding."""
    provenance = chunk.provenance
    metadata: dict[str, Any] = {
        "chunk_id": str(chunk.id),
        "document_id": str(chunk.document_id),
        "level": chunk.level,
        "parent_id": str(chunk.parent_id) if chunk.parent_id else None,
        "heading_path": list(chunk.heading_path),
        "content_kind": chunk.content_kind,
        "chunker": chunk.chunker,
        "chunker_hash": chunk.chunker_hash,
        "exact_slice": bool(chunk.metadata.get("exact_slice", True)),
        "contextual_text": chunk.contextual_text,
        "offsets_into_input": document.text == text,
    }
    start, end = getattr(provenance, "start", None), getattr(provenance, "end", None)
    if start is not None:
        metadata["start_index"], metadata["end_index"] = start, end
    return metadata
