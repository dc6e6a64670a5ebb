"""Children of chat windows keep to turns and say who speaks, like their parents."""

from __future__ import annotations

from chunking import Document, ParentChildChunker, RecursiveChunker, TurnWindowChunker

LONG = " ".join(f"Point {i} about the allotment plots is made here." for i in range(12))


def chat() -> Document:
    turns = [
        ("ana", "Shall we dig the bed today?"),
        ("bo", "Yes, after lunch."),
        ("ana", LONG),
        ("cé", "Agreed."),
    ]
    turns += [("bo", f"Short reply number {i}.") for i in range(6)]
    return Document.from_turns(turns, source_uri="mem://chat/children")


def leveled() -> ParentChildChunker:
    return ParentChildChunker(
        parent=TurnWindowChunker(chunk_size=400, tokenizer="character"),
        child=RecursiveChunker(chunk_size=120, tokenizer="character"),
    )


def test_chat_children_start_at_turns_and_record_speakers_and_turn_range() -> None:
    document = chat()
    chunks = leveled().chunk(document)
    children = [c for c in chunks if c.level == 0]
    starts = {t.start for t in document.turns}
    long_turn = document.turns[2]
    for child in children:
        assert child.metadata["speakers"], child.metadata
        first, last = child.metadata["turn_start"], child.metadata["turn_end"]
        expected = list(dict.fromkeys(t.speaker for t in document.turns[first : last + 1]))
        assert child.metadata["speakers"] == expected
        start = child.provenance.start
        if start not in starts:  # only inside the one turn over the child budget
            assert long_turn.start < start < long_turn.end
            assert (first, last) == (2, 2)
            assert child.contextual_text.startswith("ana: ")
    # The short turns at the end are packed whole, several to a child, numbered in the document.
    tail = [c for c in children if c.metadata["turn_start"] >= 4]
    assert tail and all(c.metadata["speakers"] == ["bo"] for c in tail)
    assert tail[-1].metadata["turn_end"] == len(document.turns) - 1


def test_a_long_turn_split_inside_keeps_its_speaker_in_every_piece() -> None:
    document = chat()
    pieces = [
        c
        for c in leveled().chunk(document)
        if c.level == 0 and c.metadata["turn_start"] == 2 == c.metadata["turn_end"]
    ]
    assert len(pieces) >= 3
    assert pieces[0].text.startswith("ana: ") and "continues_turn" not in pieces[0].metadata
    assert all(c.metadata["continues_turn"] == "ana" for c in pieces[1:])
    assert all(c.text.endswith(".") for c in pieces)  # cut at sentence ends, not mid-sentence
