"""Turn-window chunker behaviour: whole turns, overlap, fallback, surrounding text."""

from __future__ import annotations

from chunking import Document, RecursiveChunker, Turn, TurnWindowChunker

TURNS = [("ana", "a" * 20), ("bo", "b" * 20), ("ana", "c" * 20), ("cé", "d" * 20)]


def test_turn_window_packs_whole_turns() -> None:
    doc = Document.from_turns(TURNS, source_uri="mem://chat")
    chunks = TurnWindowChunker(chunk_size=50, tokenizer="character").chunk(doc)
    # Each turn is "speaker: " + 20 chars (23 or 24 chars); two fit in 50, three do not.
    assert [(c.metadata["turn_start"], c.metadata["turn_end"]) for c in chunks] == [(0, 1), (2, 3)]
    assert chunks[0].metadata["speakers"] == ["ana", "bo"]
    assert all(doc.text[c.provenance.start : c.provenance.end] == c.text for c in chunks)


def test_turn_window_overlap_repeats_turns_and_moves_on() -> None:
    doc = Document.from_turns(TURNS, source_uri="mem://chat")
    chunks = TurnWindowChunker(chunk_size=50, turn_overlap=1, tokenizer="character").chunk(doc)
    ranges = [(c.metadata["turn_start"], c.metadata["turn_end"]) for c in chunks]
    assert ranges == [(0, 1), (1, 2), (2, 3)]
    big_overlap = TurnWindowChunker(chunk_size=50, turn_overlap=5, tokenizer="character").chunk(doc)
    starts = [c.metadata["turn_start"] for c in big_overlap]
    assert starts == sorted(set(starts))  # always moves on by at least one turn


def test_turn_window_oversized_turn_goes_to_fallback() -> None:
    doc = Document.from_turns([("ana", "short"), ("bo", "word " * 40), ("ana", "end")], source_uri="mem://c")
    chunker = TurnWindowChunker(
        chunk_size=30, tokenizer="character", fallback=RecursiveChunker(chunk_size=25, tokenizer="character")
    )
    chunks = chunker.chunk(doc)
    names = [c.chunker for c in chunks]
    assert names[0] == "turn-window" and names[-1] == "turn-window"
    assert set(names[1:-1]) == {"turn-window:recursive"}
    assert all(c.metadata["speakers"] == ["bo"] for c in chunks[1:-1])


def test_turn_window_without_turns_uses_fallback_with_its_name() -> None:
    doc = Document.from_text("plain text\n\nno turns here", source_uri="mem://plain")
    chunks = TurnWindowChunker(chunk_size=8, tokenizer="character").chunk(doc)
    assert chunks and {c.chunker for c in chunks} == {"turn-window:recursive"}


def test_turn_window_text_before_and_after_turns_joins_windows() -> None:
    text = "PREAMBLE\n\nana: hi\n\nbo: yo\n\nEPILOGUE"
    doc = Document.create(
        source_uri="mem://x",
        text=text,
        sections=[],
        kind="chat",
        turns=[Turn(speaker="ana", start=10, end=17), Turn(speaker="bo", start=19, end=25)],
    )
    chunks = TurnWindowChunker(chunk_size=22, tokenizer="character").chunk(doc)
    assert chunks[0].text.startswith("PREAMBLE") and chunks[-1].text.endswith("EPILOGUE")
    assert "".join(c.text for c in chunks).replace("\n", "") == text.replace("\n", "")


def test_turn_window_default_fallback_shares_tokenizer_and_budget() -> None:
    chunker = TurnWindowChunker(chunk_size=64, tokenizer="character")
    assert chunker.fallback.tokenizer == "character" and chunker.fallback.chunk_size == 64
