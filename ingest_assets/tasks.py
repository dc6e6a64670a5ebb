"""The tasks the engine hands to worker processes: parse one file, chunk one document.

Each task is a module-level function of picklable arguments that returns its result or its
error as a value (never raises for bad input), so it runs the same inline or in a worker (see
:mod:`ingest_assets.workers`). Nothing here touches the store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from chunking import Chunk, Document, ParentChildChunker, ParseError
from chunking.chunk import PageProvenance, TextProvenance
from chunking.parsers import ParseLimits, parse_file
from ingest_assets.store import DocumentWrite, deflate_body, inflate_body

__all__ = ["ChunkTask", "ParseTask", "chunk_document", "parse_source", "stored_chunk"]


@dataclass(frozen=True)
class ParseTask:
    """Parse the file at ``path`` (source ``uri``) under ``limits``; ``parse_key`` is recorded."""

    path: str
    uri: str
    parse_key: str
    limits: ParseLimits


def parse_source(job: ParseTask) -> DocumentWrite | ParseError | str:
    """Parse one file: the document to write, the parser's refusal, or a crash message."""
    try:
        document = parse_file(job.path, limits=job.limits)
    except ParseError as error:
        return error
    except Exception as error:  # a parser bug must not stop the other documents
        return f"{job.uri}: parser crashed ({error!r}); report it with the file"
    return DocumentWrite(
        uri=job.uri,
        parse_key=job.parse_key,
        document_id=document.id,
        version_id=document.version_id,
        kind=document.kind,
        title=document.title,
        text_length=len(document.text),
        body=deflate_body(document.model_dump_json()),  # compressed here, not in the writer
    )


@dataclass(frozen=True)
class ChunkTask:
    """Chunk one stored document version into the rows of set ``set_key``.

    ``parent_rows`` is None for the parent level; for the child level, the stored rows of the
    parents to split.
    """

    leveler: ParentChildChunker
    set_key: str
    version_id: UUID
    body: bytes  # as stored (see ingest_assets.store.inflate_body)
    parent_rows: list[dict[str, Any]] | None = None


def chunk_document(job: ChunkTask) -> list[dict[str, Any]] | str:
    """Chunk one document: the chunk rows to store, or the error message."""
    try:
        document = Document.model_validate_json(inflate_body(job.body))
        if job.parent_rows is None:
            chunks = job.leveler.chunk_parents(document)
        else:
            parents = [stored_chunk(row) for row in job.parent_rows]
            chunks = job.leveler.chunk_children(document, parents)
    except Exception as error:  # recorded per document; the others go on
        return str(error)
    return [_chunk_row(job.set_key, job.version_id, chunk) for chunk in chunks]


def _chunk_row(set_key: str, version_id: UUID, chunk: Chunk) -> dict[str, Any]:
    """The store row of a chunk: its fields, with provenance and metadata as JSON (keys sorted)."""
    try:
        # Metadata of our chunkers is plain JSON data; dumping it directly skips pydantic's
        # per-chunk serializer (a tenth of a chunk step).
        metadata = json.dumps(chunk.metadata, sort_keys=True)
    except (TypeError, ValueError):
        metadata = json.dumps(chunk.model_dump(mode="json", include={"metadata"})["metadata"], sort_keys=True)
    return {
        "set_key": set_key,
        "id": str(chunk.id),
        "document_id": str(chunk.document_id),
        "version_id": str(version_id),
        "level": chunk.level,
        "index": chunk.index,
        "text": chunk.text,
        "chunker": chunk.chunker,
        "chunker_hash": chunk.chunker_hash,
        "parent_id": None if chunk.parent_id is None else str(chunk.parent_id),
        "provenance": json.dumps(chunk.provenance.model_dump(mode="json"), sort_keys=True),
        "heading_path": list(chunk.heading_path),
        "content_kind": chunk.content_kind,
        "token_count": chunk.metadata.get("token_count"),
        "metadata": metadata,
        "created_at": chunk.created_at.replace(tzinfo=None),
    }


def stored_chunk(row: dict[str, Any]) -> Chunk:
    """A ``Chunk`` from a row of our own store, without validation (it was validated when made)."""
    provenance = row["provenance"]
    if provenance["kind"] == "text":
        prov: Any = TextProvenance.model_construct(start=provenance["start"], end=provenance["end"])
    else:
        prov = PageProvenance.model_construct(
            pages=tuple(provenance["pages"]), boxes=tuple(tuple(b) for b in provenance.get("boxes", ()))
        )
    return Chunk.model_construct(**{**row, "provenance": prov, "heading_path": list(row["heading_path"])})
