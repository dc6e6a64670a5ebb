"""Topic cuts (issue 30): a unit over the budget is cut at the sentence end in reach where the
words before and after share least, not where the budget runs out; a text on one topic is cut
as before, and every piece is an exact slice within the budget."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import Document, SectionChunker, load_tokenizer
from chunking.chunkers.levels import PROSE_LEVELS
from chunking.chunkers.packing import TOPIC_FLOOR, PackedSplitter
from tests.chunking.invariants import check_flat
from tests.example_budget import examples

ORCHARD = [
    "The orchard planted plum trees along the northern slope.",
    "Plum blossoms opened early because the orchard slope faced south.",
    "Pickers harvested the plums from the orchard trees in August.",
]
FINANCE = [
    "The company issued senior notes with quarterly interest payments.",
    "Interest on the senior notes accrues from the issuance date.",
    "The notes rank equally with the company's unsecured debt.",
    "Dividends declared by the board were paid to shareholders in cash.",
]


@pytest.mark.parametrize("tokenizer", ["character", "cl100k_base"])
def test_a_unit_over_the_budget_is_cut_where_its_topic_changes(tokenizer: str) -> None:
    text = " ".join(ORCHARD + FINANCE)
    count = load_tokenizer(tokenizer).count
    # A budget that reaches one sentence into the finance part.
    size = count(" ".join([*ORCHARD, FINANCE[0]])) + 1
    greedy = PackedSplitter(load_tokenizer(tokenizer), size).split(text)
    topical = PackedSplitter(load_tokenizer(tokenizer), size, topic_cuts=True).split(text)
    assert greedy[0].text.endswith(FINANCE[0])  # the budget alone mixes the two topics
    assert topical[0].text == " ".join(ORCHARD)
    assert all(p.text == text[p.start : p.end] and p.token_count <= size for p in topical)
    assert [p.token_count for p in topical] == [count(p.text) for p in topical]


def test_the_section_chunker_cuts_at_topics_and_its_fingerprint_says_so() -> None:
    text = " ".join(ORCHARD + FINANCE)
    document = Document.from_text(text, source_uri="mem://two-topics")
    chunker = SectionChunker(chunk_size=len(" ".join([*ORCHARD, FINANCE[0]])) + 1, tokenizer="character")
    assert next(c.text for c in chunker.chunk(document)) == " ".join(ORCHARD)


_SENTENCES = st.lists(
    st.sampled_from([*ORCHARD, *FINANCE, "Yes.", "It rained on the plums all week long."]),
    min_size=1,
    max_size=30,
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sentences=_SENTENCES, size=st.integers(8, 400), tokenizer=st.sampled_from(["character", "cl100k_base"])
)
def test_topic_cuts_keep_the_contract(sentences: list[str], size: int, tokenizer: str) -> None:
    """Property: pieces are exact, trimmed, exactly counted slices within the budget, in order,
    covering every word; a piece cut short of the budget by choice holds at least a
    TOPIC_FLOOR-th of it; one sentence repeated (one topic) packs as without topic cuts."""
    text = " ".join(sentences)
    loaded = load_tokenizer(tokenizer)
    pieces = PackedSplitter(loaded, size, topic_cuts=True).split(text, levels=PROSE_LEVELS)
    assert "".join("".join(p.text.split()) for p in pieces) == "".join(text.split())
    position = 0
    for piece, following in zip(pieces, [*pieces[1:], None], strict=True):
        assert piece.start >= position and piece.text == text[piece.start : piece.end]
        assert piece.text == piece.text.strip() and 0 < piece.token_count <= size
        assert piece.token_count == loaded.count(piece.text)
        position = piece.end
        starts = [s for s in sentences if following is not None and following.text.startswith(s)]
        if starts and piece.text.endswith(tuple(sentences)) and piece.token_count < size // TOPIC_FLOOR:
            # Between whole sentences, only the budget ends a piece this small: the next
            # sentence did not fit.
            assert loaded.count(text[piece.start : following.start + len(starts[0])]) > size
    same = " ".join([sentences[0]] * len(sentences))
    assert [(p.start, p.end) for p in PackedSplitter(loaded, size, topic_cuts=True).split(same)] == [
        (p.start, p.end) for p in PackedSplitter(loaded, size).split(same)
    ]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sentences=_SENTENCES, size=st.integers(16, 200))
def test_section_chunks_with_topic_cuts_keep_the_chunk_contract(sentences: list[str], size: int) -> None:
    text = "\n\n".join(" ".join(sentences[i : i + 7]) for i in range(0, len(sentences), 7))
    document = Document.from_text(text, source_uri="mem://topics")
    chunker = SectionChunker(chunk_size=size, tokenizer="cl100k_base")
    check_flat(chunker, document, chunker.chunk(document), exactly_once=True)
