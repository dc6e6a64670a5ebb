"""A heading travels with what follows it: never a chunk of headings while more follows."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import SectionChunker
from tests.chunking.strategies import build_document
from tests.example_budget import examples

TABLE = "| name | kg |\n|---|---|\n" + "\n".join(f"| tree {i:02d} | {i}.5 |" for i in range(30))


def kinds_and_starts(chunks: list) -> list[tuple[str, str]]:
    return [(c.content_kind, c.text.split("\n")[0]) for c in chunks]


def test_heading_before_a_table_starts_the_tables_first_chunk() -> None:
    document = build_document(
        [
            (("Intro",), "heading", "# Intro"),
            (("Intro",), "text", "Some words."),
            (("Data",), "heading", "## Data"),
            (("Data",), "table", TABLE),
        ]
    )
    chunks = SectionChunker(chunk_size=100, min_size=0, tokenizer="character").chunk(document)
    assert all(c.content_kind != "heading" for c in chunks), kinds_and_starts(chunks)
    first_table = next(c for c in chunks if c.content_kind == "table_row")
    assert first_table.text.startswith("## Data\n\n| name | kg |")
    assert all(c.metadata["token_count"] <= 100 for c in chunks)


def test_heading_before_an_oversized_unit_goes_with_its_first_part() -> None:
    long = " ".join(f"Sentence number {i} is here." for i in range(40))
    document = build_document([(("A",), "heading", "# A"), (("A",), "text", long)])
    chunks = SectionChunker(chunk_size=120, tokenizer="character").chunk(document)
    assert len(chunks) > 2
    assert chunks[0].text.startswith("# A\n\nSentence number 0")
    assert all(c.content_kind == "text" for c in chunks)
    assert all(len(c.text) <= 120 for c in chunks)


def test_heading_before_a_list_that_does_not_fit_moves_on_with_it() -> None:
    items = "\n".join(f"- item {i}" for i in range(8))
    document = build_document([((), "text", "x" * 70), (("L",), "heading", "## L"), (("L",), "list", items)])
    chunks = SectionChunker(chunk_size=80, min_size=0, tokenizer="character").chunk(document)
    assert [c.text for c in chunks] == ["x" * 70, "## L\n\n" + items]
    assert chunks[1].heading_path == ["L"]


def test_section_ending_on_a_heading_carries_it_on() -> None:
    document = build_document(
        [
            (("A",), "heading", "# A"),
            (("A",), "text", "a" * 60),
            (("A", "B"), "heading", "## B"),
            (("A", "B"), "text", "b" * 60),
        ]
    )
    chunks = SectionChunker(chunk_size=70, min_size=0, tokenizer="character").chunk(document)
    assert [c.text for c in chunks] == ["# A\n\n" + "a" * 60, "## B\n\n" + "b" * 60]


def test_a_document_of_headings_only_may_be_headings() -> None:
    document = build_document([(("A",), "heading", "# A"), (("A", "B"), "heading", "## B")])
    chunks = SectionChunker(chunk_size=70, tokenizer="character").chunk(document)
    assert [c.text for c in chunks] == ["# A\n\n## B"] and chunks[0].content_kind == "heading"


def test_trailing_heading_joins_the_chunk_before() -> None:
    document = build_document(
        [(("A",), "heading", "# A"), (("A",), "text", "body"), (("Z",), "heading", "# Z")]
    )
    chunks = SectionChunker(chunk_size=70, min_size=0, tokenizer="character").chunk(document)
    assert [c.text for c in chunks] == ["# A\n\nbody\n\n# Z"]


RELEASES = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=10),  # the intro's length under the release heading
        st.lists(st.integers(min_value=4, max_value=28), min_size=1, max_size=4),  # its items
    ),
    min_size=2,
    max_size=12,
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(releases=RELEASES, size=st.integers(min_value=100, max_value=400), min_size=st.integers(0, 60))
def test_a_short_intro_before_subsections_leads_them(releases: list, size: int, min_size: int) -> None:
    """A changelog's release is a heading, a link line and subsections ("### Fixes", items). A
    chunk past min_size ended with the release's heading and link line, and the next chunk's
    items went without their release (pydantic's HISTORY.md: "* Handle AttributeError ..."
    labelled with no release at all). A short intro now leads the subsections as the heading
    does: a chunk that holds a release's heading holds its first subsection's first item."""
    blocks: list[tuple[tuple[str, ...], str, str]] = []
    for n, (intro, items) in enumerate(releases):
        release = f"v{n}.0"
        blocks.append(((release,), "heading", f"## {release}"))
        if intro:
            blocks.append(((release,), "text", f"[r{n}](u{n}) " + "r" * intro))
        blocks.append(((release, "Fixes"), "heading", "### Fixes"))
        for i, length in enumerate(items):
            blocks.append(((release, "Fixes"), "text", f"* fix {n}.{i} " + "x" * length))
    document = build_document(blocks)
    chunks = SectionChunker(chunk_size=size, min_size=min(min_size, size), tokenizer="character").chunk(
        document
    )
    assert "".join(c.text for c in chunks).replace("\n", "") == "".join(b[2] for b in blocks)
    for chunk in chunks:
        lines = [line for line in chunk.text.split("\n") if line]
        for at, line in enumerate(lines):
            if line.startswith("## v"):
                n = line[4:].split(".")[0]
                assert any(later.startswith(f"* fix {n}.0 ") for later in lines[at:]), chunk.text


def _squeezed(texts: Iterable[str]) -> str:
    """The texts run together without whitespace."""
    return "".join("".join(texts).split())


LABELS = [
    "Note",
    "Tip",
    "Warning:",
    "See also",
    "The options are:",
    "Notes:",
    # MkDocs openings, which the Markdown parser makes units of their own above the body
    # (short enough to lead at these budgets counted in characters).
    "!!! note",
    '??? tip "More"',
    '=== "Py 3.10"',
]


def _blocks(kinds: list, longest: int) -> st.SearchStrategy[list]:
    """Two to fourteen blocks: a kind of ``kinds`` each, and a length up to ``longest``."""
    return st.lists(
        st.tuples(st.sampled_from(kinds), st.integers(min_value=3, max_value=longest)),
        min_size=2,
        max_size=14,
    )


_PACKED = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PACKED
@given(
    blocks=_blocks([None, *LABELS], 90),
    size=st.integers(min_value=100, max_value=300),
    min_size=st.integers(0, 60),
)
def test_a_label_that_announces_what_follows_never_ends_a_chunk(
    blocks: list, size: int, min_size: int
) -> None:
    """A line of its own that only announces the next unit (an admonition's "Note" or "Tip", a
    line ending in a colon) leads that unit as a heading does. debian-reference's PDF had 25
    children end on "Note" or "Tip", their notes in the next child without them; python's
    docs, on "Notes:" before the list of notes; pydantic's, on a tab's `=== "Python 3.12 and
    above (new syntax)"` before its code."""
    units: list[tuple[tuple[str, ...], str, str]] = []
    for n, (label, length) in enumerate(blocks):
        if label is not None:
            units.append(((), "text", label))
        units.append(((), "text", f"p{n} " + "w" * length))
    document = build_document(units)
    chunks = SectionChunker(chunk_size=size, min_size=min(min_size, size), tokenizer="character").chunk(
        document
    )
    # Every unit's words once, in order (a unit cut in two loses the space at the cut).
    assert _squeezed(c.text for c in chunks) == _squeezed(u[2] for u in units)
    for chunk in chunks:
        assert chunk.text.split("\n")[-1] not in LABELS, chunk.text


@_PACKED
@given(
    blocks=_blocks(["text", "toc", "heading"], 60),
    size=st.integers(min_value=60, max_value=300),
    min_size=st.integers(0, 60),
)
def test_a_contents_list_never_shares_a_chunk_with_text_across_headings(
    blocks: list, size: int, min_size: int
) -> None:
    """A contents entry and text never share a chunk, whatever headings stand between them: a
    PDF's contents page followed by its first section's title (a heading) and text made one
    chunk of entries and prose once titles became headings (the heading let the text join)."""
    units = [
        (
            (),
            kind,
            f"# H{n}" if kind == "heading" else f"{kind}{n} " + ("c" if kind == "toc" else "w") * length,
        )
        for n, (kind, length) in enumerate(blocks)
    ]
    document = build_document(units)
    chunks = SectionChunker(chunk_size=size, min_size=min(min_size, size), tokenizer="character").chunk(
        document
    )
    for chunk in chunks:
        words = [word for word in chunk.text.split() if not word.startswith(("#", "H"))]
        kinds = {"toc" if word.startswith("toc") or set(word) == {"c"} else "text" for word in words}
        assert len(kinds) <= 1, chunk.text
