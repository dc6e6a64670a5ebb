"""The section chunker finishes its drafts in batches (so their pieces die young, which spares
the garbage collector full passes over a parsed corpus): any batch size gives the chunks that
finishing the whole document at once gives."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import Chunk, Document, SectionChunker
from chunking.chunkers import section
from tests.chunking.strategies import structured_documents
from tests.example_budget import examples


def fields(chunks: list[Chunk]) -> list[dict]:
    return [c.model_dump(exclude={"created_at"}) for c in chunks]


def chunk_with_batches(chunker: SectionChunker, document: Document, every: int) -> list[Chunk]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(section, "_FINISH_EVERY", every)
        return chunker.chunk(document)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    document=structured_documents(),
    size=st.sampled_from([16, 40, 120]),
    tokenizer=st.sampled_from(["character", "cl100k_base"]),
    every=st.integers(min_value=1, max_value=4),
)
def test_finishing_in_batches_gives_the_chunks_of_finishing_once(
    document: Document, size: int, tokenizer: str, every: int
) -> None:
    chunker = SectionChunker(chunk_size=size, tokenizer=tokenizer)
    once = chunk_with_batches(chunker, document, 1 << 30)
    batched = chunk_with_batches(chunker, document, every)
    assert fields(batched) == fields(once)
    assert len({c.created_at for c in batched}) <= 1  # one call, one time


def test_a_long_document_is_finished_in_batches_with_the_same_chunks() -> None:
    """A document with many more chunks than a batch: the default batch size in use."""
    text = "\n\n".join(f"Paragraph {i} of the orchard log, the trees and the weather." for i in range(400))
    document = Document.from_text(text, source_uri="mem://long")
    chunker = SectionChunker(chunk_size=40, tokenizer="character")
    batched = chunker.chunk(document)
    assert len(batched) > 4 * section._FINISH_EVERY
    assert fields(batched) == fields(chunk_with_batches(chunker, document, 1 << 30))
