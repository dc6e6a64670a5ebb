"""The tasks the engine hands to worker processes: parse a file, chunk or graph a document.

Each task is a module-level function of picklable arguments that returns its result or its
error as a value (never raises for bad input), so it runs the same inline or in a worker (see
:mod:`ingest_assets.engine.workers`). Nothing here touches the store.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import TypeAdapter

from chunking import Chunk, Document, ParentChildChunker, ParseError
from chunking.chunk import PageProvenance, TextProvenance
from chunking.parsers import ParseLimits, parse_file
from ingest_assets.store import DocumentWrite, GraphRow, GraphSetWrite, deflate_body, inflate_body

__all__ = [
    "ChunkTask",
    "GraphTask",
    "ParseTask",
    "chunk_document",
    "chunk_task_key",
    "graph_records",
    "parse_source",
    "stored_chunk",
]


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


def chunk_task_key(job: ChunkTask) -> str:
    """What names a chunk job's result: its set's key, which covers every input of the rows
    (the document version, the chunker's fingerprint, the parent set; see
    :mod:`ingest_assets.engine.keys`). A prefetched job is matched by it (the job itself holds
    lists, which do not hash)."""
    return job.set_key


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


@dataclass(frozen=True)
class GraphTask:
    """Make the graph records of one document version from its stored parent and child rows
    (as :meth:`ingest_assets.store.IngestStore.graph_rows` reads them)."""

    document_id: UUID
    version_id: UUID
    uri: str
    kind: str
    parent_key: str
    child_key: str
    graph_key: str
    parents: list[GraphRow]
    children: list[GraphRow]


def graph_records(task: GraphTask) -> GraphSetWrite | str:
    """Graph records of one document, straight from its stored rows (no ``Chunk`` objects): the
    records ``Chunk.to_node_record`` gives, without the text (the ``graph_nodes`` view joins it
    from ``chunks``). Returns the error message instead for a row that cannot be one."""
    try:
        doc_id = str(task.document_id)
        nodes = [
            {
                "id": doc_id,
                "label": "Document",
                "properties": json.dumps(
                    {"source_uri": task.uri, "kind": task.kind, "version_id": str(task.version_id)}
                ),
            }
        ]
        for row in (*task.parents, *task.children):
            nodes.append(
                {
                    "id": row.id,
                    "label": "ParentChunk" if row.level else "Chunk",
                    "properties": json.dumps(_node_properties(row)),
                }
            )
        parent_ids = [row.id for row in task.parents]
        child_ids = [row.id for row in task.children]
        edges = [
            {"source_id": doc_id, "target_id": p, "type": "HAS_CHUNK", "properties": "{}"} for p in parent_ids
        ]
        edges += [
            {"source_id": row.parent_id, "target_id": row.id, "type": "PARENT_OF", "properties": "{}"}
            for row in task.children
        ]
        for level in (parent_ids, child_ids):
            edges += [
                {"source_id": a, "target_id": b, "type": "NEXT", "properties": "{}"}
                for a, b in itertools.pairwise(level)
            ]
    except (TypeError, ValueError, KeyError) as error:
        return f"graph records of {task.uri} could not be made ({error}); report it with the file"
    return GraphSetWrite(
        task.graph_key, task.document_id, task.version_id, task.parent_key, task.child_key, nodes, edges
    )


_DATETIME_ADAPTER: TypeAdapter[datetime] = TypeAdapter(datetime)


def _node_properties(row: GraphRow) -> dict[str, Any]:
    """``Chunk.to_node_record().properties`` of a stored chunk row (see ``graph_rows``) but the
    text."""
    return {
        "document_id": row.document_id,
        "index": row.index,
        "provenance": _json_provenance(json.loads(row.provenance)),
        "heading_path": list(row.heading_path),
        "section_label": Chunk.section_label(_Headings(row.heading_path)),  # type: ignore[arg-type]
        "content_kind": row.content_kind,
        "chunker": row.chunker,
        "chunker_hash": row.chunker_hash,
        "level": row.level,
        "parent_id": row.parent_id,
        "metadata": json.loads(row.metadata),
        "created_at": _DATETIME_ADAPTER.dump_python(row.created_at, mode="json"),
    }


def _json_provenance(provenance: dict[str, Any]) -> dict[str, Any]:
    """Stored provenance JSON (keys sorted) in the models' field order, as ``model_dump`` gives it."""
    if provenance["kind"] == "text":
        return {"kind": "text", "start": provenance["start"], "end": provenance["end"]}
    return {"kind": "page", "pages": provenance["pages"], "boxes": provenance.get("boxes", [])}


@dataclass(frozen=True)
class _Headings:
    heading_path: Sequence[str]
