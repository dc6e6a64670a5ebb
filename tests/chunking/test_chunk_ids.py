"""Text chunk ids leave out the document version: one id names one (document, span, level, text)
whatever the version, so an edit re-ids only the chunks it changed (issue 31)."""

from __future__ import annotations

from uuid import UUID

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import Chunk, Document, PageProvenance, ParentChildChunker, SectionChunker, TextProvenance
from tests.example_budget import examples

UUIDS = st.uuids(version=5)
SPANS = st.tuples(st.integers(0, 10_000), st.integers(1, 5_000)).map(lambda s: (s[0], s[0] + s[1]))
TEXTS = st.text(min_size=1, max_size=40)
# One document's chunks: distinct (span, level, text), as a chunker makes them.
CHUNKS = st.lists(st.tuples(SPANS, st.integers(0, 1), TEXTS), min_size=1, max_size=40, unique=True)


def _id(document: UUID, version: UUID | None, span: tuple[int, int], level: int, text: str | None) -> UUID:
    return Chunk.id_for(
        document_id=document,
        version_id=version,
        provenance=TextProvenance(start=span[0], end=span[1]),
        index=0,
        level=level,
        text=text,
    )


@settings(max_examples=examples(200), deadline=None)
@given(document=UUIDS, versions=st.lists(st.one_of(st.none(), UUIDS), min_size=2, max_size=3), chunks=CHUNKS)
def test_text_chunk_ids_are_unique_in_a_document_and_equal_whatever_the_version(
    document: UUID, versions: list[UUID | None], chunks: list[tuple[tuple[int, int], int, str]]
) -> None:
    ids = [
        [_id(document, version, span, level, text) for span, level, text in chunks] for version in versions
    ]
    assert len(set(ids[0])) == len(chunks)  # unique within the document's chunks
    assert all(other == ids[0] for other in ids[1:])  # the version never enters a text chunk's id


@settings(max_examples=examples(200), deadline=None)
@given(
    documents=st.lists(UUIDS, min_size=2, max_size=2, unique=True),
    span=SPANS,
    texts=st.lists(TEXTS, min_size=2, max_size=2, unique=True),
    version=UUIDS,
)
def test_a_text_chunk_id_moves_with_the_document_the_span_the_level_or_the_text(
    documents: list[UUID], span: tuple[int, int], texts: list[str], version: UUID
) -> None:
    (a, b), (text, other) = documents, texts
    made = _id(a, version, span, 0, text)
    assert made == _id(a, None, span, 0, text)
    assert made != _id(b, version, span, 0, text)
    assert made != _id(a, version, (span[0], span[1] + 1), 0, text)
    assert made != _id(a, version, span, 1, text)
    assert made != _id(a, version, span, 0, other)  # same span, other text: another id
    assert made != _id(a, version, span, 0, None)
    # The per-document maker the chunkers use gives the same ids.
    assert Chunk.ids_for(a, version)(TextProvenance(start=span[0], end=span[1]), 3, 0, text) == made


def test_page_chunk_ids_keep_their_rule_version_included() -> None:
    document, v1, v2 = (UUID(int=n) for n in (1, 2, 3))
    pages = PageProvenance(pages=(2,))

    def made(version: UUID | None, index: int = 0, chunker_hash: str | None = "abc") -> UUID:
        return Chunk.id_for(
            document_id=document,
            version_id=version,
            provenance=pages,
            index=index,
            chunker_hash=chunker_hash,
            text="t",
        )

    # Pages say too little of where a chunk is: the version and the index still name it.
    assert made(v1) != made(v2) and made(v1) != made(v1, index=1) and made(v1) != made(v1, chunker_hash="x")
    assert made(v1) == made(v1)


SECTIONS = "\n\n".join(
    f"## Part {i}\n\n" + "\n\n".join(f"Paragraph {i}.{j}: " + "words to pack. " * (j + 2) for j in range(3))
    for i in range(12)
)


def test_an_appended_paragraph_keeps_the_ids_of_every_chunk_it_does_not_change() -> None:
    leveler = ParentChildChunker(
        parent=SectionChunker(chunk_size=300, tokenizer="character"),
        child=SectionChunker(chunk_size=100, tokenizer="character"),
    )
    before = Document.from_text(SECTIONS, source_uri="mem://ids")
    after = Document.from_text(SECTIONS + "\n\nOne more paragraph at the end.", source_uri="mem://ids")
    assert before.id == after.id and before.version_id != after.version_id
    old, new = leveler.chunk(before), leveler.chunk(after)
    for chunks in (old, new):
        assert len({c.id for c in chunks}) == len(chunks)

    def named(chunks: list[Chunk]) -> dict[tuple, UUID | None]:
        return {(c.level, c.provenance.start, c.provenance.end, c.text): c.id for c in chunks}  # type: ignore[union-attr]

    old_named, new_named = named(old), named(new)
    kept = old_named.keys() & new_named.keys()
    assert all(old_named[k] == new_named[k] for k in kept)
    assert len(kept) >= len(old) - 3  # the last parent and a child or two, of dozens
    assert {old_named[k] for k in old_named.keys() - kept}.isdisjoint(new_named.values())
