"""Packing that stops at a change of topic (issue 30): a chunk past ``min_size`` ends where the
next unit belongs with what follows rather than with the chunk."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import Document, SectionChunker
from chunking.chunkers.cohesion import content_words, similarity, topic_shifts
from tests.chunking.invariants import check_flat
from tests.example_budget import examples

ORCHARD = ["orchard", "plums", "apples", "pears", "quinces", "rootstock", "harvest", "grafting"]
FINANCE = ["dividend", "shares", "quarterly", "board", "declared", "payable", "stockholders", "record"]


def _paragraphs(vocabulary: list[str]) -> st.SearchStrategy[list[str]]:
    # Every paragraph of a topic names its first five words (what makes it one topic), then
    # any of the others.
    sentence = st.lists(st.sampled_from(vocabulary), min_size=1, max_size=12).map(
        lambda words: " ".join(vocabulary[:5] + words).capitalize() + "."
    )
    return st.lists(sentence, min_size=2, max_size=5)


def _topic_of(text: str) -> set[str]:
    words = content_words(text)
    return {name for name, vocab in (("orchard", ORCHARD), ("finance", FINANCE)) if words & set(vocab)}


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=_paragraphs(ORCHARD), second=_paragraphs(FINANCE), size=st.integers(2000, 4000))
def test_no_chunk_mixes_two_topics_that_each_fill_min_size(
    first: list[str], second: list[str], size: int
) -> None:
    """Property: two runs of paragraphs with no word in common, everything within one budget:
    no chunk holds both, and the chunk contract holds (exact slices, budget)."""
    document = Document.from_text("\n\n".join(first + second), source_uri="mem://two-topics")
    chunker = SectionChunker(chunk_size=size, min_size=0, tokenizer="character", cohesion=True)
    chunks = chunker.chunk(document)
    check_flat(chunker, document, chunks, exactly_once=True)
    assert all(len(_topic_of(c.text)) == 1 for c in chunks), [c.text for c in chunks]
    assert len(chunks) == 2


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paragraphs=_paragraphs(ORCHARD), size=st.integers(2000, 4000))
def test_one_topic_packs_to_the_budget_as_before(paragraphs: list[str], size: int) -> None:
    """Property: paragraphs sharing their words never end a chunk early."""
    document = Document.from_text("\n\n".join(paragraphs), source_uri="mem://one-topic")
    chunks = SectionChunker(chunk_size=size, min_size=0, tokenizer="character", cohesion=True).chunk(document)
    assert len(chunks) == 1


def test_a_chunk_under_min_size_is_never_closed_by_a_topic_change() -> None:
    text = "Plums and quinces in the orchard.\n\nThe board declared a quarterly dividend.\n\n" * 1
    text += "Dividend payable to stockholders of record."
    document = Document.from_text(text, source_uri="mem://small")
    chunks = SectionChunker(chunk_size=400, min_size=100, tokenizer="character", cohesion=True).chunk(
        document
    )
    assert len(chunks) == 1


def test_the_rule_itself() -> None:
    chunk = content_words("The orchard grows plums, apples and pears on old rootstock.")
    unit = content_words("The board declared a quarterly dividend on its shares.")
    following = content_words("The dividend on the shares is payable to stockholders of record.")
    assert similarity(unit, chunk) == 0.0 and similarity(unit, following) > 0.3
    assert topic_shifts(frozenset(chunk), unit, following)
    assert not topic_shifts(frozenset(chunk), frozenset(), following)
    assert not topic_shifts(unit, unit, following)
    assert content_words("The 2017 U.S. figures were the same") == {"figures"}


def test_cohesion_is_a_setting_in_the_fingerprint_and_off_by_default() -> None:
    text = "\n\n".join(
        [
            "Orchard plums apples pears quinces grow on rootstock.",
            "Orchard plums apples pears quinces need grafting.",
            "Dividend shares quarterly board declared payable now.",
            "Dividend shares quarterly board declared record date.",
        ]
    )
    document = Document.from_text(text, source_uri="mem://setting")
    plain = SectionChunker(chunk_size=1000, min_size=0, tokenizer="character")
    topical = plain.model_copy(update={"cohesion": True})
    assert plain.fingerprint() != topical.fingerprint()
    assert len(plain.chunk(document)) == 1
    assert len(topical.chunk(document)) == 2
