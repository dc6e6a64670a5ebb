"""Overlap as context (issue 30): the end of the chunk before goes into ``contextual_text``
only; stored text stays the exact slice; the setting is part of the fingerprint."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import Document, SectionChunker
from chunking.chunkers.overlap import tail_within
from tests.chunking.invariants import check_flat
from tests.chunking.strategies import text_documents
from tests.example_budget import examples

PROSE = "\n\n".join(
    f"Paragraph {i} begins here. It has a middle sentence about plums. It ends with sentence {i}."
    for i in range(12)
)


def test_overlap_puts_the_end_of_the_chunk_before_into_contextual_text_only() -> None:
    document = Document.from_text(PROSE, source_uri="mem://prose")
    plain = SectionChunker(chunk_size=60, tokenizer="cl100k_base")
    overlapping = plain.model_copy(update={"overlap": 12})
    assert plain.fingerprint() != overlapping.fingerprint()
    before, after = plain.chunk(document), overlapping.chunk(document)
    assert [c.text for c in before] == [c.text for c in after]
    assert "context_before" not in after[0].metadata
    for previous, chunk in itertools.pairwise(after):
        context = chunk.metadata["context_before"]
        assert previous.text.endswith(context)
        assert overlapping.count_tokens(context) <= 12
        assert chunk.contextual_text.startswith(f"…{context}\n\n{chunk.text}")
        assert document.text[chunk.provenance.start : chunk.provenance.end] == chunk.text
    assert all("context_before" not in c.metadata for c in before)


def test_the_context_starts_at_a_sentence_where_one_fits() -> None:
    count = len
    assert tail_within("One two. Three four five. Six seven.", 30, count) == "Three four five. Six seven."
    assert tail_within("One two. Three four five. Six seven.", 12, count) == "Six seven."
    assert tail_within("alpha beta gamma delta", 11, count) == "gamma delta"
    assert tail_within("alpha", 2, count) == ""


def test_no_context_crosses_a_section() -> None:
    from chunking.parsers import parse_bytes

    source = b"# A\n\nFirst section text is here.\n\n# B\n\nSecond section text is here.\n"
    document = parse_bytes(source, kind="markdown", source_uri="mem://two.md")
    chunks = SectionChunker(chunk_size=12, tokenizer="character", overlap=8).chunk(document)
    firsts = {}
    for chunk in chunks:
        firsts.setdefault(tuple(chunk.heading_path), chunk)
    assert all("context_before" not in c.metadata for c in firsts.values())


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=text_documents(), size=st.integers(8, 200), overlap=st.integers(1, 64))
def test_overlap_keeps_the_chunk_contract(document: Document, size: int, overlap: int) -> None:
    """Property: with any overlap the chunks are those without it (exact slices, budgets), and
    each context is the end of the chunk before, within the overlap."""
    chunker = SectionChunker(chunk_size=size, tokenizer="character", overlap=overlap)
    chunks = chunker.chunk(document)
    check_flat(chunker, document, chunks, exactly_once=True)
    plain = SectionChunker(chunk_size=size, tokenizer="character").chunk(document)
    assert [c.text for c in chunks] == [c.text for c in plain]
    for previous, chunk in itertools.pairwise(chunks):
        context = chunk.metadata.get("context_before")
        if context:
            assert previous.text.rstrip().endswith(context) and len(context) <= overlap
