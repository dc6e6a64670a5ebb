"""Token-size stats and previews of chunk sets, from the summaries their rows keep (no I/O).

No Dagster here. A chunk set's row in ``chunk_sets`` holds its chunk count, token stats and
first chunks, so a step reports on thousands of sets without reading a chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest_assets.store.rows import PREVIEW_ROWS, SetSummary

__all__ = ["PreviewChunk", "SizeStats", "summarize"]


@dataclass(frozen=True)
class PreviewChunk:
    """One chunk of a step's preview: its source, index, token count and first 60 characters."""

    source_uri: str
    index: int
    tokens: int | None
    text: str


@dataclass(frozen=True)
class SizeStats:
    """Chunk count and token-size stats over some sets, with a preview of their first chunks."""

    chunks: int = 0
    tokens_min: int = 0
    tokens_mean: float = 0.0
    tokens_max: int = 0
    preview: tuple[PreviewChunk, ...] = ()


def summarize(sets: dict[str, tuple[str, SetSummary]], preview_rows: int = PREVIEW_ROWS) -> SizeStats:
    """Aggregate the summaries of sets (set key -> (source URI, summary)).

    Token stats are over chunks with a token count (0 when none); the preview is the first
    ``preview_rows`` chunks by source URI and index.

    Raises:
        ValueError: ``preview_rows`` is over the :data:`PREVIEW_ROWS` a set keeps.
    """
    if preview_rows > PREVIEW_ROWS:
        raise ValueError(f"preview_rows={preview_rows}: a set keeps its first {PREVIEW_ROWS} chunks")
    preview: list[PreviewChunk] = []
    for uri, summary in sorted(sets.values(), key=lambda entry: entry[0]):
        if len(preview) >= preview_rows:
            break
        preview += [PreviewChunk(uri, index, tokens, text) for tokens, index, text in summary.preview]
    summaries = [summary for _, summary in sets.values()]
    counted = sum(s.tokens_counted or 0 for s in summaries)
    return SizeStats(
        chunks=sum(s.chunk_count for s in summaries),
        tokens_min=min((s.tokens_min for s in summaries if s.tokens_min is not None), default=0),
        tokens_mean=round(sum(s.token_total or 0 for s in summaries) / counted, 1) if counted else 0.0,
        tokens_max=max((s.tokens_max for s in summaries if s.tokens_max is not None), default=0),
        preview=tuple(preview[:preview_rows]),
    )
