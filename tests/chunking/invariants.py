"""The contract every chunker keeps, as one checking function shared by all chunker tests."""

from __future__ import annotations

import itertools
from collections import defaultdict

from chunking import (
    BaseChunker,
    Chunk,
    Document,
    PageProvenance,
    ParentChildChunker,
    TextProvenance,
    TurnWindowChunker,
)


def unit_spans(document: Document) -> list[tuple[int, int]]:
    return [(u.start, u.end) for s in document.sections for u in s.units if u.start is not None]


def covered_counts(
    document: Document, chunks: list[Chunk], start: int = 0, end: int | None = None
) -> list[int]:
    """How many chunks cover each character of the document text from ``start`` to ``end`` (the
    whole text by default): ``counts[i]`` is position ``start + i``. A span, not the whole text,
    for each parent: a document's text once per parent made the whole-corpus sweep quadratic."""
    end = len(document.text) if end is None else end
    delta = [0] * (end - start + 1)
    for chunk in chunks:
        if isinstance(chunk.provenance, TextProvenance):
            low, high = max(chunk.provenance.start, start), min(chunk.provenance.end, end)
            if low < high:
                delta[low - start] += 1
                delta[high - start] -= 1
    return [*itertools.accumulate(delta[:-1]), 0]


def must_cover(document: Document) -> list[int]:
    """Positions of non-space characters a chunker must cover: inside units, or anywhere."""
    spans = unit_spans(document) or [(0, len(document.text))]
    if document.turns:
        spans = [(0, len(document.text))]
    positions = []
    for start, end in spans:
        positions.extend(i for i in range(start, end) if not document.text[i].isspace())
    return positions


def budget_of(chunker: BaseChunker, chunk: Chunk) -> tuple[int, int]:
    """Return (measured size, budget) for a chunk of a flat chunker."""
    if isinstance(chunker, TurnWindowChunker):
        if chunk.chunker == chunker.fallback_name:
            return chunker.count_tokens(chunk.text), chunker.fallback.chunk_size
        return chunk.metadata["turn_tokens"], chunker.chunk_size
    return chunker.count_tokens(chunk.text), chunker.chunk_size


def counter_of(chunker: BaseChunker, chunk: Chunk) -> BaseChunker:
    """The chunker whose tokenizer counted ``chunk`` (a fallback counts its own chunks)."""
    if isinstance(chunker, TurnWindowChunker) and chunk.chunker == chunker.fallback_name:
        return chunker.fallback
    return chunker


def check_flat(chunker: BaseChunker, document: Document, chunks: list[Chunk], *, exactly_once: bool) -> None:
    """Assert the contract of one level of chunks made by ``chunker`` from ``document``."""
    assert [c.index for c in chunks] == list(range(len(chunks)))
    ids = [c.id for c in chunks]
    assert None not in ids and len(set(ids)) == len(ids)
    fingerprint = chunker.fingerprint()  # hashes every setting: once, not per chunk
    for chunk in chunks:
        assert chunk.text.strip(), "empty chunk"
        assert chunk.chunker and chunk.chunker_hash == fingerprint
        measured, budget = budget_of(chunker, chunk)
        assert measured <= budget, (measured, budget, chunk.text[:80])
        assert chunk.metadata["token_count"] == counter_of(chunker, chunk).count_tokens(chunk.text)
        if isinstance(chunk.provenance, TextProvenance):
            start, end = chunk.provenance.start, chunk.provenance.end
            assert 0 <= start < end <= len(document.text)
            if chunk.metadata.get("exact_slice", True):
                assert document.text[start:end] == chunk.text
            else:
                # A repeated table header or a blank-line join: the chunk still ends with the
                # document's text at the end of its span and holds no text from elsewhere.
                assert chunk.text.endswith(document.text[end - 1 : end])
    if all(isinstance(c.provenance, TextProvenance) for c in chunks):
        counts = covered_counts(document, chunks)
        required = must_cover(document)
        assert all(counts[i] >= 1 for i in required), "a non-space character is not covered"
        if exactly_once:
            assert all(counts[i] <= 1 for i in range(len(document.text))), "chunks overlap"
    if isinstance(chunker, TurnWindowChunker) and document.turns:
        for chunk in chunks:
            if chunk.chunker == chunker.fallback_name:
                continue
            start, end = chunk.provenance.start, chunk.provenance.end
            for turn in document.turns:
                said = document.text[turn.start : turn.end]
                if not said.strip():
                    continue
                # The turn's content: whitespace at its edges is not part of what was said.
                first = turn.start + len(said) - len(said.lstrip())
                last = turn.end - (len(said) - len(said.rstrip()))
                inside = start <= first and last <= end
                outside = last <= start or end <= first
                assert inside or outside, "a window boundary falls inside a turn"


def check_leveled(leveler: ParentChildChunker, document: Document, chunks: list[Chunk]) -> None:
    """Assert the contract of parents and children, and that children sit inside parents."""
    parents = [c for c in chunks if c.level == 1]
    children = [c for c in chunks if c.level == 0]
    assert chunks == parents + children
    overlap = getattr(leveler.parent, "turn_overlap", 0) > 0
    check_flat(leveler.parent, document, parents, exactly_once=not overlap)
    by_id = {p.id: p for p in parents}
    assert [c.index for c in children] == list(range(len(children)))
    assert len({c.id for c in children}) == len(children)
    per_parent: dict = defaultdict(list)
    fingerprint = leveler.child.fingerprint()
    for child in children:
        assert child.parent_id in by_id
        assert child.chunker_hash == fingerprint
        assert child.text.strip()
        per_parent[child.parent_id].append(child)
        parent = by_id[child.parent_id]
        if isinstance(parent.provenance, PageProvenance):
            assert set(child.provenance.pages) <= set(parent.provenance.pages)
            continue
        assert parent.provenance.start <= child.provenance.start
        assert child.provenance.end <= parent.provenance.end
        if child.metadata.get("exact_slice", True):
            assert document.text[child.provenance.start : child.provenance.end] == child.text
    for parent in parents:
        kids = per_parent[parent.id]
        assert kids, "a parent has no children"
        if isinstance(parent.provenance, TextProvenance):
            start, end = parent.provenance.start, parent.provenance.end
            counts = covered_counts(document, kids, start, end)
            missing = [
                i for i in range(start, end) if not document.text[i].isspace() and counts[i - start] == 0
            ]
            assert not missing, "children do not cover their parent"
