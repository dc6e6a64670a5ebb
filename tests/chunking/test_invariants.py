"""The shared invariant suite: every chunker x tokenizer, on random and on real documents."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from chunking import (
    Document,
    ParentChildChunker,
    RecursiveChunker,
    SectionChunker,
    TurnWindowChunker,
)
from tests.chunking.invariants import check_flat, check_leveled
from tests.chunking.strategies import documents
from tests.example_budget import examples

TOKENIZERS = ["character", "word", "cl100k_base", "o200k_base"]


def make_chunkers(tokenizer: str) -> dict[str, object]:
    small = 24 if tokenizer != "character" else 120
    return {
        "recursive": RecursiveChunker(chunk_size=small, tokenizer=tokenizer),
        "section": SectionChunker(chunk_size=small * 2, tokenizer=tokenizer),
        "section-min0": SectionChunker(chunk_size=small, min_size=0, tokenizer=tokenizer),
        "turn-window": TurnWindowChunker(
            chunk_size=small * 2,
            tokenizer=tokenizer,
            fallback=RecursiveChunker(chunk_size=small, tokenizer=tokenizer),
        ),
        "turn-window-overlap": TurnWindowChunker(
            chunk_size=small * 3,
            turn_overlap=1,
            tokenizer=tokenizer,
            fallback=RecursiveChunker(chunk_size=small, tokenizer=tokenizer),
        ),
        "section>recursive": ParentChildChunker(
            parent=SectionChunker(chunk_size=small * 4, tokenizer=tokenizer),
            child=RecursiveChunker(chunk_size=small, tokenizer=tokenizer),
        ),
        "turn-window>section": ParentChildChunker(
            parent=TurnWindowChunker(chunk_size=small * 4, turn_overlap=1, tokenizer=tokenizer),
            child=SectionChunker(chunk_size=small, tokenizer=tokenizer),
        ),
    }


CASES = [(tokenizer, name) for tokenizer in TOKENIZERS for name in make_chunkers("character")]


def check(chunker: object, document: Document, *, rebuilt: bool = True) -> None:
    """The chunks of ``document`` keep the contract; with ``rebuilt``, a chunker built again
    from the settings makes the same chunks (ids, texts, spans)."""
    first = chunker.chunk(document)
    if isinstance(chunker, ParentChildChunker):
        check_leveled(chunker, document, first)
    else:
        overlap = getattr(chunker, "turn_overlap", 0) > 0
        check_flat(chunker, document, first, exactly_once=not overlap)
    if not rebuilt:
        return
    again = type(chunker).model_validate(dict(chunker)).chunk(document)
    assert [(c.id, c.text, c.provenance) for c in again] == [(c.id, c.text, c.provenance) for c in first]


@pytest.mark.parametrize(("tokenizer", "name"), CASES)
@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(document=documents)
def test_chunker_keeps_contract_on_random_documents(tokenizer: str, name: str, document: Document) -> None:
    check(make_chunkers(tokenizer)[name], document)


@pytest.mark.parametrize("name", list(make_chunkers("character")))
def test_chunker_keeps_contract_on_corpus(name: str, corpus_documents: list[Document]) -> None:
    chunker = make_chunkers("cl100k_base")[name]
    for document in corpus_documents:
        check(chunker, document)


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize("name", list(make_chunkers("character")))
def test_chunker_keeps_contract_on_whole_corpus(name: str, whole_corpus_documents: list[Document]) -> None:
    """The contract on every document of the corpus. That a rebuilt chunker makes the same
    chunks is a property of the code, not of the document: the corpus sample above and the
    random documents check it (chunking everything twice doubled this sweep's cost)."""
    chunker = make_chunkers("cl100k_base")[name]
    for document in whole_corpus_documents:
        check(chunker, document, rebuilt=False)
