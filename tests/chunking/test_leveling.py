"""Parent/child leveling: the two steps, reuse of stored parents, clipping, ids."""

from __future__ import annotations

from chunking import (
    Chunk,
    Document,
    PageProvenance,
    ParentChildChunker,
    RecursiveChunker,
    Section,
    SectionChunker,
    TurnWindowChunker,
    Unit,
)
from tests.chunking.invariants import check_leveled
from tests.chunking.test_section import layout

TEXT = "\n\n".join(f"Paragraph {i}. " + "Some words here. " * (i % 7 + 1) for i in range(30))


def _section_over_recursive() -> ParentChildChunker:
    """Parents of 200 characters by section, children of 60 by the recursive splitter."""
    return ParentChildChunker(
        parent=SectionChunker(chunk_size=200, tokenizer="character"),
        child=RecursiveChunker(chunk_size=60, tokenizer="character"),
    )


def test_leveling_returns_parents_then_children_with_parent_ids() -> None:
    doc = Document.from_text(TEXT, source_uri="mem://lv")
    leveler = _section_over_recursive()
    chunks = leveler.chunk(doc)
    check_leveled(leveler, doc, chunks)
    parents = [c for c in chunks if c.level == 1]
    assert len(parents) > 3 and all(c.parent_id is None for c in parents)


def test_children_redone_from_stored_parents_match_a_fresh_run() -> None:
    doc = Document.from_text(TEXT, source_uri="mem://lv")
    leveler = _section_over_recursive()
    parents = leveler.chunk_parents(doc)
    stored = [Chunk.model_validate_json(p.model_dump_json()) for p in parents]  # as a store gives them back
    smaller = leveler.model_copy(update={"child": RecursiveChunker(chunk_size=40, tokenizer="character")})
    assert smaller.parent.fingerprint() == leveler.parent.fingerprint()
    redone = smaller.chunk_children(doc, stored)
    fresh = [c for c in smaller.chunk(doc) if c.level == 0]
    assert [(c.id, c.text, c.parent_id) for c in redone] == [(c.id, c.text, c.parent_id) for c in fresh]


def test_overlapping_parents_give_children_distinct_ids() -> None:
    turns = [(f"s{i % 3}", "word " * 10) for i in range(12)]
    doc = Document.from_turns(turns, source_uri="mem://chat")
    leveler = ParentChildChunker(
        parent=TurnWindowChunker(chunk_size=120, turn_overlap=2, tokenizer="character"),
        child=RecursiveChunker(chunk_size=60, tokenizer="character"),
    )
    chunks = leveler.chunk(doc)
    children = [c for c in chunks if c.level == 0]
    assert len({c.id for c in children}) == len(children)
    spans = [(c.provenance.start, c.provenance.end) for c in children]
    assert len(set(spans)) < len(spans)  # the same span under two parents
    check_leveled(leveler, doc, chunks)


def test_children_of_a_parent_that_cuts_a_table_row_keep_its_text() -> None:
    rows = ["| h |", "|---|", *["| a |"] * 6, "| " + "long cell " * 12 + "|", *["| b |"] * 3]
    doc = layout([(("T",), "text", "intro"), (("T",), "table", "\n".join(rows)), (("T",), "text", "outro")])
    leveler = ParentChildChunker(
        parent=RecursiveChunker(chunk_size=70, tokenizer="character"),  # cuts through rows
        child=SectionChunker(chunk_size=30, tokenizer="character"),
    )
    check_leveled(leveler, doc, leveler.chunk(doc))


def test_children_of_page_parents_stay_on_their_pages() -> None:
    doc = Document.create(
        source_uri="mem://pdf",
        text="x",
        sections=[
            Section(units=(Unit(text="alpha " * 30, page=1),)),
            Section(units=(Unit(text="beta " * 30, page=2),)),
        ],
        kind="pdf",
    )
    leveler = ParentChildChunker(
        parent=SectionChunker(chunk_size=400, tokenizer="character"),
        child=RecursiveChunker(chunk_size=50, tokenizer="character"),
    )
    chunks = leveler.chunk(doc)
    children = [c for c in chunks if c.level == 0]
    assert children and all(isinstance(c.provenance, PageProvenance) for c in children)
    check_leveled(leveler, doc, chunks)
