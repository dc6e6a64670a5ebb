"""Document and chunk models: constructors, offsets, labels, node records."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chunking import Chunk, Document, PageProvenance, Section, TextProvenance, Unit


def test_from_text_units_are_exact_paragraph_slices() -> None:
    text = "  First para.\r\n\r\nSecond\nline.\n \n\nThird"
    doc = Document.from_text(text, source_uri="mem://t")
    units = doc.sections[0].units
    assert [u.text for u in units] == ["First para.", "Second\nline.", "Third"]
    assert all(text[u.start : u.end] == u.text for u in units)


def test_from_turns_holds_every_turn_with_offsets() -> None:
    doc = Document.from_turns([("ana", "hello"), ("bo", "hi there")], source_uri="mem://c")
    assert doc.kind == "chat"
    assert [doc.text[t.start : t.end] for t in doc.turns] == ["ana: hello", "bo: hi there"]
    assert [t.speaker for t in doc.turns] == ["ana", "bo"]


def test_version_changes_with_content_and_id_does_not() -> None:
    a = Document.from_text("one", source_uri="file:///x")
    b = Document.from_text("two", source_uri="file:///x")
    assert a.id == b.id and a.version_id != b.version_id


def test_document_rejects_offsets_that_do_not_slice() -> None:
    with pytest.raises(ValidationError, match="does not match"):
        Document.create(
            source_uri="mem://bad",
            text="hello",
            sections=[Section(units=(Unit(text="help", start=0, end=4),))],
        )


def test_provenance_is_discriminated_on_kind() -> None:
    chunk = Chunk.model_validate(
        {"document_id": Document.node_id_for("x"), "text": "t", "provenance": {"kind": "page", "pages": [2]}}
    )
    assert chunk.provenance == PageProvenance(pages=(2,))
    again = Chunk.model_validate_json(chunk.model_dump_json())
    assert isinstance(again.provenance, PageProvenance)


def test_section_label_and_contextual_text() -> None:
    chunk = Chunk(
        document_id=Document.node_id_for("x"),
        text="body",
        provenance=TextProvenance(start=0, end=4),
        heading_path=["Guide\n  Part", "Setup ----- notes"],
    )
    assert chunk.section_label() == "Guide Part > Setup - notes"
    assert chunk.contextual_text == "Guide Part > Setup - notes\n\nbody"
    bare = chunk.model_copy(update={"heading_path": []})
    assert bare.section_label() is None and bare.contextual_text == "body"


@pytest.mark.parametrize(
    ("title", "first", "label"),
    [
        # Python's HTML pages: the <title> is the first heading and the site's name.
        (
            "datetime — Basic date and time types — Python 3.11.2 documentation",
            "datetime — Basic date and time types",
            "datetime — Basic date and time types > timedelta Objects",
        ),
        ("Orchard | Community Gardens", "Orchard", "Orchard > timedelta Objects"),
        ("Orchard", "Orchard", "Orchard > timedelta Objects"),
        # More than a suffix: the title says something the heading does not.
        (
            "Introduction to orchards",
            "Introduction",
            "Introduction to orchards > Introduction > timedelta Objects",
        ),
        ("Orchards", "Orchard", "Orchards > Orchard > timedelta Objects"),
    ],
)
def test_contextual_text_leaves_out_a_title_its_first_heading_says(
    title: str, first: str, label: str
) -> None:
    chunk = Chunk(
        document_id=Document.node_id_for("x"),
        text="body",
        provenance=TextProvenance(start=0, end=4),
        heading_path=[first, "timedelta Objects"],
        metadata={"document_title": title},
    )
    assert chunk.contextual_text == f"{label}\n\nbody"


def test_node_record_needs_an_id_and_is_json_safe() -> None:
    chunk = Chunk(
        document_id=Document.node_id_for("x"), text="body", provenance=TextProvenance(start=0, end=4)
    )
    with pytest.raises(ValueError, match="has no id"):
        chunk.to_node_record()
    chunk.id = Chunk.id_for(document_id=chunk.document_id, provenance=chunk.provenance, index=0)
    record = chunk.to_node_record()
    assert record.id == str(chunk.id) and record.label == "Chunk"
    assert record.properties["provenance"] == {"kind": "text", "start": 0, "end": 4}
    import json

    json.dumps(record.model_dump())


def test_unvalidated_constructors_equal_validated_ones() -> None:
    """Chunk.made and TextProvenance.at (the chunkers' fast paths) make what validation makes."""
    from datetime import UTC, datetime
    from uuid import uuid4

    from chunking import Chunk, PageProvenance, TextProvenance

    now, document_id = datetime.now(UTC), uuid4()
    span = TextProvenance.at(3, 9)
    assert span == TextProvenance(start=3, end=9) and hash(span) == hash(TextProvenance(start=3, end=9))
    fields = {
        "document_id": document_id,
        "text": "a text",
        "provenance": span,
        "heading_path": ["A"],
        "content_kind": "code",
        "metadata": {"token_count": 2},
        "created_at": now,
    }
    fast, slow = Chunk.made(**fields), Chunk(**fields)
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()
    copied = fast.model_copy(update={"index": 4})
    assert copied.index == 4 and fast.index == 0
    pages = PageProvenance.of((2, 3))
    assert pages == PageProvenance(pages=(2, 3)) and hash(pages) == hash(PageProvenance(pages=(2, 3)))
    assert pages.model_dump() == PageProvenance(pages=(2, 3)).model_dump()
    assert pages.model_fields_set == PageProvenance(pages=(2, 3)).model_fields_set
    assert span.model_fields_set == TextProvenance(start=3, end=9).model_fields_set


def test_chunks_made_fast_share_a_fields_set_that_assignment_leaves_alone() -> None:
    """Chunk.made's chunks share one fields_set of every field name: assigning a field (all
    pydantic does to it) changes neither that chunk's set nor any other chunk's."""
    from datetime import UTC, datetime
    from uuid import uuid4

    from chunking import Chunk, TextProvenance

    def made(text: str) -> Chunk:
        return Chunk.made(
            document_id=uuid4(),
            text=text,
            provenance=TextProvenance.at(0, len(text)),
            heading_path=[],
            content_kind="text",
            metadata={},
            created_at=datetime.now(UTC),
        )

    first, second = made("one"), made("two")
    every = set(Chunk.model_fields)
    first.text, first.index = "uno", 3
    assert first.model_fields_set == every and second.model_fields_set == every
    assert second.text == "two" and second.index == 0
    copied = first.model_copy(update={"level": 1})
    assert copied.model_fields_set == every and copied.model_fields_set is not first.model_fields_set
    assert Chunk.model_validate(first.model_dump()) == first


def test_uuid5_of_equals_uuid5() -> None:
    from uuid import uuid5

    from chunking.ids import CHUNK_NAMESPACE, uuid5_of

    for name in ["", "a", "x\x1f1\x1f2", "日本語", "level\x1f1"]:
        made = uuid5_of(CHUNK_NAMESPACE.bytes, name)
        assert made == uuid5(CHUNK_NAMESPACE, name)
        assert str(made) == str(uuid5(CHUNK_NAMESPACE, name)) and made.version == 5
