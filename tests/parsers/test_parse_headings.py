"""Headings that are headings: a length limit, setext under one short line, titles from the
document's start, WikiText heading lines, one paragraph a line (issue 30)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import SectionChunker
from chunking.parsers import parse_bytes
from chunking.parsers.plain_headings import (
    COLLECTION_LEVEL_ONES,
    MAX_HEADING_CHARS,
    TITLE_AFTER_CHARS,
    TITLE_AFTER_UNITS,
    wiki_heading,
)
from tests.example_budget import examples
from tests.parsers.conftest import assert_exact_offsets

LONG = " ".join(["The quarterly dividend was raised by the board after a long review."] * 10)


def _md(source: str, uri: str = "mem://notes.md"):
    return parse_bytes(source.encode(), kind="markdown", source_uri=uri)


def _kinds(document) -> list[tuple[tuple[str, ...], str]]:
    return [(s.heading_path, u.content_kind) for s in document.sections for u in s.units]


def test_a_lone_equals_line_under_a_long_paragraph_makes_no_heading_or_title() -> None:
    document = _md(f"{LONG}\n=\n\nMore text.\n")
    assert all(u.content_kind == "text" for s in document.sections for u in s.units)
    assert all(s.heading_path == () for s in document.sections)
    assert document.title == "notes"
    assert_exact_offsets(document)


def test_setext_needs_one_short_line() -> None:
    two_lines = _md("First line\nsecond line\n===========\n\nBody.\n")
    assert _kinds(two_lines) == [((), "text"), ((), "text")]
    one_line = _md("Short title\n===========\n\nBody.\n")
    assert _kinds(one_line) == [(("Short title",), "heading"), (("Short title",), "text")]


def test_an_atx_heading_over_the_length_limit_is_text() -> None:
    long_heading = "x" * (MAX_HEADING_CHARS + 1)
    document = _md(f"## {long_heading}\n\nBody.\n")
    assert _kinds(document) == [((), "text"), ((), "text")]


def test_a_title_comes_from_the_start_and_labels_nothing_before_it() -> None:
    late = _md(f"{LONG}\n\n{LONG}\n\n{LONG}\n\n{LONG}\n\n# Appendix\n\nNotes.\n")
    assert late.title == "notes"
    chunks = SectionChunker(chunk_size=64, tokenizer="character").chunk(late)
    before = [c for c in chunks if c.provenance.end <= late.text.index("# Appendix")]
    assert before and all("Appendix" not in c.contextual_text for c in before)
    early = _md("<p>badge</p>\n\n# Orchard\n\nBody.\n")
    assert early.title == "Orchard"


WIKI = (
    " = Valkyria Chronicles III = \n"
    " Senjō no Valkyria 3 is a tactical role @-@ playing video game . \n"
    " = = Gameplay = = \n"
    " As with previous games , the player controls a squad . \n"
    " = = = Music = = = \n"
    " The music was composed by Hitoshi Sakimoto . \n"
    " = Tower Building of the Little Rock Arsenal = \n"
    " The Tower Building is a structure in Little Rock . \n"
    " = Other = \n"
    " A third article . \n"
)


def test_wikitext_heading_lines_inside_a_paragraph_open_sections() -> None:
    document = _md(WIKI, "mem://wikitexts.md")
    paths = [s.heading_path for s in document.sections]
    assert paths == [
        ("Valkyria Chronicles III",),
        ("Valkyria Chronicles III", "Gameplay"),
        ("Valkyria Chronicles III", "Gameplay", "Music"),
        ("Tower Building of the Little Rock Arsenal",),
        ("Other",),
    ]
    # Three articles one after another: the first heading is no title of the others.
    assert document.title == "wikitexts"
    assert_exact_offsets(document)
    tower = [
        c for c in SectionChunker(chunk_size=20, tokenizer="character").chunk(document) if "Tower" in c.text
    ]
    assert tower and all("Valkyria" not in c.contextual_text for c in tower)


def test_long_lines_are_one_paragraph_each_and_wrapped_lines_stay_together() -> None:
    lines = [f"Paragraph {i}: " + "word " * 60 for i in range(3)]
    document = _md("\n".join(lines) + "\n")
    assert [u.text for s in document.sections for u in s.units] == [line.rstrip() for line in lines]
    wrapped = _md("A short line\nwrapped here\nand here.\n")
    assert len([u for s in wrapped.sections for u in s.units]) == 1


@settings(max_examples=examples(200), deadline=None)
@given(
    level=st.integers(1, 6),
    text=st.text(alphabet="abcdefghij ABC@-,.", min_size=1, max_size=40).filter(lambda t: t.strip()),
    spaced=st.booleans(),
    pad=st.sampled_from(["", " ", "  "]),
)
def test_wiki_heading_lines_round_trip(level: int, text: str, spaced: bool, pad: str) -> None:
    """Any run of '=' on both sides, spaced or not, gives the level and the text; unequal runs
    or a line of text with '=' inside it give none."""
    run = (" " if spaced else "").join("=" * level)
    line = f"{pad}{run} {text} {run}{pad}"
    assert wiki_heading(line) == (level, " ".join(text.split()))
    assert wiki_heading(f"{run}= {text} {run}") is None
    assert wiki_heading(f"{text} = {text}") is None


@settings(max_examples=examples(100), deadline=None)
@given(
    heading=st.lists(st.sampled_from(["orchard", "plum", "a", "dividend"]), min_size=1, max_size=40).map(
        " ".join
    ),
    underline=st.sampled_from(["=", "===", "-", "---"]),
)
def test_a_setext_heading_is_a_heading_only_when_short(heading: str, underline: str) -> None:
    """Property: whatever a setext underline sits under, a heading is never over the limit, and
    a heading is made exactly when the line is within it."""
    document = _md(f"{heading.strip()}\n{underline}\n\nBody text.\n")
    headings = [u for s in document.sections for u in s.units if u.content_kind == "heading"]
    assert all(len(s.heading_path[-1]) <= MAX_HEADING_CHARS for s in document.sections if s.heading_path)
    assert bool(headings) == (len(" ".join(heading.split())) <= MAX_HEADING_CHARS)


_WORDS = st.sampled_from(["orchard", "plum", "dividend", "review", "a", "board", "ripe"])


def _phrase(min_words: int, max_words: int) -> st.SearchStrategy[str]:
    return st.lists(_WORDS, min_size=min_words, max_size=max_words).map(" ".join)


# A block and whether it is a heading: (source, heading text or None, level).
_BLOCKS = st.one_of(
    _phrase(1, 60).map(lambda p: (p.capitalize() + ".", None, 0)),
    st.tuples(st.integers(1, 3), _phrase(1, 30)).map(
        lambda t: (f"{'#' * t[0]} {t[1]}", t[1] if len(t[1]) <= MAX_HEADING_CHARS else None, t[0])
    ),
    st.tuples(st.sampled_from(["=", "-"]), _phrase(1, 30), st.booleans()).map(
        lambda t: (
            f"{t[1]}\nmore words\n{t[0] * 3}" if t[2] else f"{t[1]}\n{t[0] * 3}",
            None if t[2] or len(t[1]) > MAX_HEADING_CHARS else t[1],
            1 if t[0] == "=" else 2,
        )
    ),
)


@settings(max_examples=examples(150), deadline=None)
@given(blocks=st.lists(_BLOCKS, min_size=1, max_size=12))
def test_markdown_headings_are_short_label_only_what_follows_and_title_only_from_the_start(
    blocks: list[tuple[str, str | None, int]],
) -> None:
    """Property over Markdown of paragraphs, ATX and setext headings (long, short, under one
    line or two): exactly the short one-line headings are headings; a unit's heading path
    names only headings at or before it; the title is a level-1 heading among the document's
    first blocks (and not in a collection of articles), or else the file name."""
    document = _md("\n\n".join(source for source, _, _ in blocks))
    assert_exact_offsets(document)
    expected = [(text, level) for _, text, level in blocks if text is not None]
    units = [(s.heading_path, u) for s in document.sections for u in s.units]
    headings = [u for _, u in units if u.content_kind == "heading"]
    assert len(headings) == len(expected)
    seen: list[str] = []
    for path, unit in units:
        if unit.content_kind == "heading":
            seen.append(" ".join(unit.text.lstrip("#").split()) if unit.text.startswith("#") else unit.text)
        assert all(len(h) <= MAX_HEADING_CHARS for h in path)
        assert all(any(h in s for s in seen) for h in path), (path, seen)
    level_ones = [text for text, level in expected if level == 1]
    if document.title != "notes":
        first = next(i for i, (_, text, _) in enumerate(blocks) if text is not None)
        assert blocks[first][2] == 1 and document.title == blocks[first][1]
        assert first <= TITLE_AFTER_UNITS and len(level_ones) < COLLECTION_LEVEL_ONES
        assert sum(len(source) for source, _, _ in blocks[:first]) <= TITLE_AFTER_CHARS + first
    elif len(level_ones) < COLLECTION_LEVEL_ONES and blocks[0][1] is not None and blocks[0][2] == 1:
        raise AssertionError("a level-1 heading opening the document is its title")


def _roman(n: int) -> str:
    out = ""
    for value, mark in ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out, n = out + mark, n - value
    return out


@settings(max_examples=examples(80), deadline=None)
@given(
    acts=st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=5),  # scenes per act
    roman=st.booleans(),
    titled=st.booleans(),
)
def test_a_books_divisions_numbered_in_order_are_headings(acts: list[int], roman: bool, titled: bool) -> None:
    """Persuasion's 24 'Chapter N' lines were text: none of its 637 children had a heading
    path, and 13 ran across a chapter break. A document's divisions numbered from one, in order
    (scenes again from one in each act), open sections; the first division met is the outer."""
    blocks, expected = [], []
    for a, scenes in enumerate(acts, start=1):
        act = f"ACT {_roman(a) if roman else a}" + (f". The part {a}" if titled else "")
        blocks.append(act)
        for s in range(1, scenes + 1):
            scene = f"Scene {_roman(s) if roman else s}"
            blocks += [scene, f"Words spoken in act {a}, scene {s}, by the players."]
            # A division is a heading where the document has two or more of it.
            expected.append(tuple(h for h, many in ((act, len(acts) > 1), (scene, sum(acts) > 1)) if many))
    document = parse_bytes("\n\n".join(blocks).encode(), kind="text", source_uri="mem://play.txt")
    assert_exact_offsets(document)
    units = [
        (s.heading_path, u.text) for s in document.sections for u in s.units if u.text.startswith("Words")
    ]
    assert [path for path, _ in units] == expected


def test_divisions_out_of_order_or_alone_are_text() -> None:
    """A numbered mention is no heading: one 'Chapter 3' line alone, or lines out of order."""
    for lines in (
        ["Chapter 3", "Text."],
        ["Part 2", "Text.", "Part 1", "More."],
        ["chapter 1", "a.", "chapter 2", "b."],
    ):
        document = parse_bytes("\n\n".join(lines).encode(), kind="text", source_uri="mem://t.txt")
        assert all(s.heading_path == () for s in document.sections), lines
