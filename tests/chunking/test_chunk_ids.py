"""Text chunk ids leave out the document version and the span: one id names one (document, level,
text, occurrence of that text) whatever the version and wherever the text sits, so an edit re-ids
only the chunks whose text it changed, and an insertion keeps the ids of what it moved (issue 31)."""

from __future__ import annotations

from uuid import UUID

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import Chunk, Document, PageProvenance, ParentChildChunker, SectionChunker, TextProvenance
from tests.example_budget import examples

UUIDS = st.uuids(version=5)
SPANS = st.tuples(st.integers(0, 10_000), st.integers(1, 5_000)).map(lambda s: (s[0], s[0] + s[1]))
TEXTS = st.text(min_size=1, max_size=40)
# One document's chunks as a chunker makes them: (span, level, text), texts may repeat.
CHUNKS = st.lists(
    st.tuples(SPANS, st.integers(0, 1), st.sampled_from(["a", "b", "a b"]) | TEXTS), min_size=1, max_size=40
)


def _id(
    document: UUID,
    version: UUID | None,
    span: tuple[int, int],
    level: int,
    text: str | None,
    occurrence: int = 0,
) -> UUID:
    return Chunk.id_for(
        document_id=document,
        version_id=version,
        provenance=TextProvenance(start=span[0], end=span[1]),
        index=0,
        level=level,
        text=text,
        occurrence=occurrence,
    )


def _ids(document: UUID, version: UUID | None, chunks: list[tuple[tuple[int, int], int, str]]) -> list[UUID]:
    """The ids of a document's chunks, each text's occurrences counted per level in order."""
    seen: dict[tuple[int, str], int] = {}
    ids = []
    for span, level, text in chunks:
        occurrence = seen.get((level, text), 0)
        seen[(level, text)] = occurrence + 1
        ids.append(_id(document, version, span, level, text, occurrence))
    return ids


@settings(max_examples=examples(200), deadline=None)
@given(
    document=UUIDS,
    versions=st.lists(st.one_of(st.none(), UUIDS), min_size=2, max_size=3),
    chunks=CHUNKS,
    shift=st.integers(1, 500),
)
def test_text_chunk_ids_are_unique_in_a_document_and_equal_whatever_the_version_or_the_span(
    document: UUID, versions: list[UUID | None], chunks: list[tuple[tuple[int, int], int, str]], shift: int
) -> None:
    ids = [_ids(document, version, chunks) for version in versions]
    assert len(set(ids[0])) == len(chunks)  # unique within the document's chunks, texts repeated too
    assert all(other == ids[0] for other in ids[1:])  # the version never enters a text chunk's id
    moved = [((start + shift, end + shift), level, text) for (start, end), level, text in chunks]
    assert _ids(document, versions[0], moved) == ids[0]  # nor does where the text sits


@settings(max_examples=examples(200), deadline=None)
@given(
    documents=st.lists(UUIDS, min_size=2, max_size=2, unique=True),
    span=SPANS,
    texts=st.lists(TEXTS, min_size=2, max_size=2, unique=True),
    version=UUIDS,
)
def test_a_text_chunk_id_moves_with_the_document_the_level_the_text_or_its_occurrence(
    documents: list[UUID], span: tuple[int, int], texts: list[str], version: UUID
) -> None:
    (a, b), (text, other) = documents, texts
    made = _id(a, version, span, 0, text)
    assert made == _id(a, None, span, 0, text) == _id(a, version, (span[0] + 1, span[1] + 1), 0, text)
    assert made != _id(b, version, span, 0, text)
    assert made != _id(a, version, span, 1, text)
    assert made != _id(a, version, span, 0, other)
    assert made != _id(a, version, span, 0, text, occurrence=1)  # the text's second occurrence
    # Without a text, the span names the chunk.
    assert made != _id(a, version, span, 0, None) != _id(a, version, (span[0], span[1] + 1), 0, None)
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


def _leveler() -> ParentChildChunker:
    return ParentChildChunker(
        parent=SectionChunker(chunk_size=300, tokenizer="character"),
        child=SectionChunker(chunk_size=100, tokenizer="character"),
    )


def _by_text(chunks: list[Chunk]) -> dict[tuple[int, str], list[UUID | None]]:
    named: dict[tuple[int, str], list[UUID | None]] = {}
    for chunk in chunks:
        named.setdefault((chunk.level, chunk.text), []).append(chunk.id)
    return named


def test_an_edit_keeps_the_ids_of_every_chunk_whose_text_it_does_not_change() -> None:
    """An appended paragraph, and a paragraph inserted in the middle, which moves every later
    chunk: the chunks whose text is unchanged keep their ids (only their offsets moved)."""
    leveler = _leveler()
    parts = SECTIONS.split("## Part 6")
    before = Document.from_text(SECTIONS, source_uri="mem://ids")
    old = leveler.chunk(before)
    assert len({c.id for c in old}) == len(old)
    for edited, edit_at in (
        (SECTIONS + "\n\nOne more paragraph at the end.", len(SECTIONS)),
        (
            parts[0] + "A paragraph inserted in the middle, before the seventh part.\n\n## Part 6" + parts[1],
            len(parts[0]),
        ),
    ):
        after = Document.from_text(edited, source_uri="mem://ids")
        assert before.id == after.id and before.version_id != after.version_id
        new = leveler.chunk(after)
        assert len({c.id for c in new}) == len(new)
        old_named, new_named = _by_text(old), _by_text(new)
        kept = old_named.keys() & new_named.keys()
        assert all(old_named[k] == new_named[k] for k in kept)
        gone = {i for k in old_named.keys() - kept for i in old_named[k]}
        assert gone.isdisjoint(c.id for c in new)
        # Children: all but the one or two over the edit keep their texts, so their ids.
        children = [k for k in old_named if k[0] == 0]
        assert len([k for k in children if k in kept]) >= len(children) - 2
        # Parents: the packing of the few after an insertion moves until it meets the old
        # boundaries again; from there on, later parents keep their ids at new offsets.
        moved = [c for c in new if (c.level, c.text) in kept and c.provenance.start > edit_at]  # type: ignore[union-attr]
        assert moved or edit_at == len(SECTIONS)
        assert all((c.level, c.text) in kept for c in old if c.provenance.end < edit_at - 200)  # type: ignore[union-attr]


def test_repeated_texts_get_distinct_ids_that_stay_when_one_is_inserted_after_them() -> None:
    """Equal texts are told apart by their occurrence (in document order): adding another copy
    after them keeps their ids; the new copy gets the next one."""
    line = "The same boilerplate line, repeated."
    before = Document.from_text("\n\n".join([line] * 3), source_uri="mem://repeat")
    after = Document.from_text("\n\n".join([line] * 4), source_uri="mem://repeat")
    chunker = SectionChunker(chunk_size=40, tokenizer="character")
    old, new = chunker.chunk(before), chunker.chunk(after)
    assert [c.text for c in old] == [line] * 3 and len({c.id for c in new}) == 4
    assert [c.id for c in new[:3]] == [c.id for c in old]
