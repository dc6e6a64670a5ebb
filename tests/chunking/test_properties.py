"""Properties of chunks a retrieval engineer would keep (issue 17), on random structured documents."""

from __future__ import annotations

from uuid import UUID

import pytest
from hypothesis import HealthCheck, given, settings

from chunking import (
    Chunk,
    Document,
    ParentChildChunker,
    RecursiveChunker,
    Section,
    SectionChunker,
    TextProvenance,
    TurnWindowChunker,
    Unit,
)
from chunking.chunkers.tables import column_names
from chunking.document import Span
from tests.chunking.invariants import check_flat, check_leveled
from tests.chunking.strategies import FENCE_LINE, chat_documents, structured_documents
from tests.example_budget import examples

SETTINGS = settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TOKENIZERS = ["character", "cl100k_base"]


def leveler(tokenizer: str) -> ParentChildChunker:
    small = 120 if tokenizer == "character" else 32
    return ParentChildChunker(
        parent=SectionChunker(chunk_size=small * 4, tokenizer=tokenizer),
        child=SectionChunker(chunk_size=small, tokenizer=tokenizer),
    )


def table_of(document: Document, chunk: Chunk):
    if not isinstance(chunk.provenance, TextProvenance):
        return None
    for section in document.sections:
        for unit in section.units:
            if unit.content_kind == "table" and unit.start <= chunk.provenance.end - 1 < unit.end:
                return unit
    return None


def carries_names(chunk: Chunk, table, document: Document | None = None) -> bool:
    """Whether every row line of ``chunk`` (a piece of ``table``) is named by its columns: the
    header rows in the text, or each line ``name: value``. The headings and the lead-in line
    (``...:``) before the table in ``document`` lead its first chunk and are not rows."""
    header = table.text[table.rows[0].start : table.rows[table.header_rows - 1].end]
    if header in chunk.text:
        return True
    names = column_names(header, "|")

    def named(line: str) -> bool:
        name = line.split(": ", 1)[0]
        # A long name is shortened with an ellipsis to leave room for the values.
        return name in names or (name.endswith("…") and any(n.startswith(name[:-1]) for n in names))

    start = chunk.provenance.start if isinstance(chunk.provenance, TextProvenance) else table.start
    before = (
        set(document.text[start : table.start].split("\n")) if document and start < table.start else set()
    )
    lines = [
        line
        for line in chunk.text.split("\n")
        if not line.startswith("#") and line.strip() and line not in before
    ]
    return bool(lines) and all(named(line) for line in lines)


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@SETTINGS
@given(document=structured_documents())
def test_table_children_carry_their_tables_column_names(tokenizer: str, document: Document) -> None:
    chunks = leveler(tokenizer).chunk(document)
    check_leveled(leveler(tokenizer), document, chunks)
    for chunk in chunks:
        if chunk.content_kind != "table_row":
            continue
        table = table_of(document, chunk)
        assert table is not None
        assert carries_names(chunk, table, document), (chunk.level, chunk.text[:200])


def test_a_table_led_in_by_a_line_and_cut_to_columns_carries_its_column_names() -> None:
    """Hypothesis's draw: a lead-in line (``the:``) leads a table whose rows are written as
    ``name: value``; the lead-in is not a row of the table."""
    table = "| col0_name | col1_name | col2_name | col3_name | col4_name |\n|---|---|---|---|---|\n"
    table += "| 0 | 0 | 0 | 0 | 0 |"
    text = f"# Part 0 of the orchard\n\nthe:\n\n{table}"
    units = (
        Unit(text="# Part 0 of the orchard", content_kind="heading", start=0, end=23),
        Unit(text="the:", content_kind="text", start=25, end=29),
        Unit(
            text=table,
            content_kind="table",
            start=31,
            end=31 + len(table),
            rows=(Span(start=0, end=61), Span(start=62, end=83), Span(start=84, end=105)),
            header_rows=2,
        ),
    )
    document = Document.from_text(text, source_uri="mem://lead").model_copy(
        update={"sections": (Section(heading_path=("Part 0 of the orchard",), units=units),)}
    )
    rows = [c for c in leveler("character").chunk(document) if c.content_kind == "table_row"]
    columns = [c for c in rows if c.metadata.get("rendering") == "columns" and "the:" in c.text]
    assert columns, [c.text for c in rows]
    for chunk in rows:
        assert carries_names(chunk, table_of(document, chunk), document), chunk.text
    stray = columns[0].model_copy(update={"text": columns[0].text + "\nstray line"})
    assert not carries_names(stray, table_of(document, columns[0]), document)


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@SETTINGS
@given(document=structured_documents())
def test_no_chunk_is_only_a_heading_unless_nothing_follows(tokenizer: str, document: Document) -> None:
    """A heading-only chunk is allowed only where no other unit follows it (the document is
    only headings, or ends with them), or where the next unit is a heading too (a run of
    headings over the budget: the last of them go on with what follows)."""
    chunks = leveler(tokenizer).chunk(document)
    units = [u for s in document.sections for u in s.units]
    for chunk in chunks:
        if chunk.content_kind != "heading":
            continue
        after = [u for u in units if u.start >= chunk.provenance.end]
        if after and after[0].content_kind == "heading":
            continue
        assert all(u.content_kind == "heading" for u in after), (chunk.level, chunk.text, after[:1])


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@SETTINGS
@given(document=structured_documents())
def test_a_unit_cut_to_the_budget_ends_its_last_chunk(tokenizer: str, document: Document) -> None:
    """The tail of a unit over the budget is a chunk of its own: nothing from a later unit is
    packed after it (but headings ending the document, which join the chunk before)."""
    chunker = leveler(tokenizer).child
    chunks = chunker.chunk(document)
    check_flat(chunker, document, chunks, exactly_once=True)
    units = [u for s in document.sections for u in s.units]
    for unit in units:
        if unit.content_kind in ("table", "heading") or chunker.count_tokens(unit.text) <= chunker.chunk_size:
            continue
        [last] = [c for c in chunks if c.provenance.start < unit.end <= c.provenance.end]
        if last.provenance.end == unit.end:
            continue
        after = [u for u in units if u.start >= unit.end]
        assert last is chunks[-1] and all(u.content_kind == "heading" for u in after), (unit.text, last.text)


def chat_leveler(tokenizer: str) -> ParentChildChunker:
    small = 60 if tokenizer == "character" else 16
    return ParentChildChunker(
        parent=TurnWindowChunker(chunk_size=small * 4, tokenizer=tokenizer),
        child=RecursiveChunker(chunk_size=small, tokenizer=tokenizer),
    )


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@SETTINGS
@given(document=chat_documents())
def test_chat_children_start_on_a_turn_or_inside_a_turn_over_budget(
    tokenizer: str, document: Document
) -> None:
    leveled = chat_leveler(tokenizer)
    chunks = leveled.chunk(document)
    check_leveled(leveled, document, chunks)
    turns = document.turns or ()
    budget = leveled.child.chunk_size
    for child in (c for c in chunks if c.level == 0):
        start = child.provenance.start
        first, last = child.metadata["turn_start"], child.metadata["turn_end"]
        assert child.metadata["speakers"] == list(dict.fromkeys(t.speaker for t in turns[first : last + 1]))
        if any(start == t.start for t in turns) or start == 0:
            continue
        # Inside a turn: the one turn over the child budget it is a piece of.
        assert first == last, child.metadata
        turn = turns[first]
        assert turn.start < start < turn.end
        assert leveled.child.count_tokens(document.text[turn.start : turn.end]) > budget
        assert child.contextual_text.startswith(f"{turn.speaker}: ")


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@SETTINGS
@given(document=structured_documents())
def test_a_split_code_blocks_contextual_text_is_fenced(tokenizer: str, document: Document) -> None:
    chunks = leveler(tokenizer).chunk(document)
    for chunk in chunks:
        assert len(FENCE_LINE.findall(chunk.contextual_text)) % 2 == 0, chunk.contextual_text
        if chunk.metadata.get("fence_open") or chunk.metadata.get("fence_close"):
            assert chunk.content_kind == "code"
            assert document.text[chunk.provenance.start : chunk.provenance.end] == chunk.text
            body = chunk.contextual_text.split("\n\n", 1)[-1] if chunk.heading_path else chunk.contextual_text
            opening = chunk.metadata.get("fence_open")
            assert not opening or body.startswith(opening + "\n")


def test_a_code_blocks_last_piece_with_prose_after_it_is_code() -> None:
    """Found by the property above: the closing fence of a split block, packed with the prose
    after it, was labelled text although its contextual text re-opens the fence."""
    text = "# Part 0 of the orchard\n\n```python\npass\n0:0b\n0:0:0\n0:0:0b\n```\n\nthe"
    units = (
        Unit(text=text[:23], content_kind="heading", start=0, end=23),
        Unit(text=text[25:61], content_kind="code", start=25, end=61),
        Unit(text="the", content_kind="text", start=63, end=66),
    )
    document = Document(
        id=UUID("dd73e36b-3bfc-5b41-ad7c-bb4ae5749029"),
        version_id=UUID("38e0ad66-2a05-5cfa-a506-e877fdc7c505"),
        source_uri="mem://fence",
        kind="markdown",
        text=text,
        sections=(Section(heading_path=("Part 0 of the orchard",), units=units),),
    )
    children = [c for c in leveler("cl100k_base").chunk(document) if c.level == 0]
    tail = next(c for c in children if c.metadata.get("fence_open"))
    assert tail.text.startswith("```\n") and tail.text.endswith("the")
    assert tail.content_kind == "code"
    assert tail.contextual_text == "Part 0 of the orchard\n\n```python\n```\n\nthe"
