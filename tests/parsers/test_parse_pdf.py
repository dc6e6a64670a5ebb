"""PDF parser: sections from the outline (else one per page), page units without offsets."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chunking.chunkers.leveling import ParentChildChunker
from chunking.chunkers.section import SectionChunker
from chunking.document import Document, Unit
from chunking.parsers import parse_bytes, parse_file
from chunking.parsers.contents import contents_lines
from chunking.parsers.pdf import _clean, _title_as_heading
from chunking.parsers.pdf_layout import (
    Block,
    Line,
    OutlineEntry,
    PageParts,
    body_size,
    join_across_pages,
    mark_contents,
    page_blocks,
    running_lines,
    section_paths,
)
from tests.parsers.pdf_fixtures import FOOTNOTE, HEADER, manual


def test_pdf_sample_has_one_section_per_page_with_page_units(sample_dir: Path) -> None:
    document = parse_file(sample_dir / "orchard-report.pdf")
    assert document.kind == "pdf"
    assert document.metadata["page_count"] == 3 == len(document.sections)
    assert document.title == "Orchard report"
    for number, section in enumerate(document.sections, start=1):
        assert section.heading_path == ()
        assert section.units
        for unit in section.units:
            assert unit.page == number and unit.start is None and unit.end is None
    assert document.sections[0].units[0].text == "Orchard report: the autumn harvest"
    assert document.sections[1].units[0].text == "Yield by variety"
    assert "apple 5 163.2" in document.sections[1].units[1].text
    assert document.text.count("\f") == 2


def test_pdf_sample_script_is_reproducible(sample_dir: Path) -> None:
    import importlib.util

    script = sample_dir.parents[1] / "scripts" / "make_sample_pdf.py"
    spec = importlib.util.spec_from_file_location("make_sample_pdf", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == (sample_dir / "orchard-report.pdf").read_bytes()


# ----------------------------------------------------------------------------- layout (issue 18)

_MANUAL: dict[bool, Document] = {}


def _manual(outline: bool = True) -> Document:
    if outline not in _MANUAL:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fpdf2's note on the A5 size
            data = manual(outline=outline)
        _MANUAL[outline] = parse_bytes(data, kind="pdf", source_uri=f"mem://manual-{outline}.pdf")
    return _MANUAL[outline]


def _units(document: Document) -> list[tuple[tuple[str, ...], Unit]]:
    return [(s.heading_path, u) for s in document.sections for u in s.units]


def _leveler(child_size: int = 256) -> ParentChildChunker:
    return ParentChildChunker(
        parent=SectionChunker(chunk_size=1024), child=SectionChunker(chunk_size=child_size)
    )


def test_pdf_outline_gives_sections_and_heading_paths() -> None:
    document = _manual()
    assert document.metadata["outline_entries"] == 4
    paths = {u.text.split("\n")[0]: path for path, u in _units(document)}
    assert paths["Orchard Manual"] == ()
    assert paths["Fruit trees are pruned to let light into the crown and to keep them a size"] == (
        "1 Pruning",
    )
    assert paths["1.1 Winter pruning"] == ("1 Pruning", "1.1 Winter pruning")
    assert paths["Stored fruit is checked every week. A rotten apple is taken out at once."] == (
        "2 Harvest",
        "2.1 Storing",
    )
    # Children carry the path of the section their text is in, even when a parent runs on from
    # a short section into the next one (the section chunker's min_size).
    children = [c for c in _leveler(64).chunk(document) if c.level == 0 and c.provenance.pages[0] >= 3]
    assert children and all(c.heading_path for c in children)


def test_pdf_section_titles_on_the_page_are_headings() -> None:
    """A section's title as the page sets it was a text unit: the chunker left it at the end
    of the chunk before (R-data's "4.3 R interface packages" was a child of 6 tokens, and 5 of
    the corpus's PDF headings were so) or took it for a contents line. It is a heading unit,
    which travels with what follows: after its number or alone, over two lines of a wrapped
    title, split off the paragraph it opens, a "Chapter 1" line above it, even where a contents
    page's loose lines marked it toc; a first paragraph that is no title stays text."""
    document = _manual()
    firsts = {s.heading_path: s.units[0] for s in document.sections if s.heading_path}
    assert {path: (u.content_kind, u.text) for path, u in firsts.items()} == {
        ("1 Pruning",): ("heading", "1 Pruning"),
        ("1 Pruning", "1.1 Winter pruning"): ("heading", "1.1 Winter pruning"),
        ("2 Harvest",): ("heading", "2 Harvest"),
        ("2 Harvest", "2.1 Storing"): ("heading", "2.1 Storing"),
    }
    for chunk in _leveler(64).chunk(document):
        assert chunk.text.strip() not in ("1 Pruning", "1.1 Winter pruning", "2 Harvest", "2.1 Storing")

    def kinds(texts: list[tuple[str, str]], title: str) -> list[tuple[str, str]]:
        units = tuple(Unit(text=text, content_kind=kind, page=1) for kind, text in texts)
        return [(u.content_kind, u.text) for u in _title_as_heading(units, title)]

    question = "What is the difference between Debian and other distributions? Why choose Debian?"
    assert kinds(
        [
            ("text", "1.5 What is the difference between Debian and other"),
            ("text", "distributions? Why choose"),
            ("text", "Debian?\nDebian is a distribution."),
        ],
        question,
    ) == [
        ("text", "1.5 What is the difference between Debian and other"),
        ("text", "distributions? Why choose"),
        ("text", "Debian?\nDebian is a distribution."),
    ]  # three paragraphs: too far
    assert kinds(
        [
            ("text", "1.5 What is the difference between Debian and other distributions?"),
            ("text", "Why choose Debian?\nDebian is a distribution."),
        ],
        question,
    ) == [
        ("heading", "1.5 What is the difference between Debian and other distributions?"),
        ("heading", "Why choose Debian?"),
        ("text", "Debian is a distribution."),
    ]
    assert kinds(
        [("text", "Chapter 1"), ("toc", "Definitions and overview"), ("text", "Body.")],
        "Definitions and overview",
    ) == [("heading", "Chapter 1"), ("heading", "Definitions and overview"), ("text", "Body.")]
    assert kinds(
        [("text", "1.5.2 The \u201d$LANG\u201d variable\nThe variable sets the locale.")],
        'The "$LANG" variable',
    ) == [("heading", "1.5.2 The \u201d$LANG\u201d variable"), ("text", "The variable sets the locale.")]
    assert kinds([("text", "Some words before the title."), ("text", "2 Harvest")], "Harvest") == [
        ("text", "Some words before the title."), ("text", "2 Harvest")
    ]  # fmt: skip


def test_pdf_without_outline_has_empty_heading_paths_one_section_per_page() -> None:
    document = _manual(outline=False)
    assert document.metadata["outline_entries"] == 0
    assert len(document.sections) == document.metadata["page_count"] == 5
    assert all(s.heading_path == () for s in document.sections)


def test_pdf_running_headers_and_page_numbers_leave_the_units() -> None:
    document = _manual()
    texts = [u.text for _, u in _units(document)]
    assert not any(HEADER in text for text in texts)
    assert not any(line.strip().isdigit() for text in texts for line in text.split("\n"))
    assert document.metadata["running_lines_dropped"] == 6  # header and number on pages 3-5
    assert "Orchard Manual" in texts  # the title page's title is not a running header


def test_pdf_contents_page_is_marked_and_kept_out_of_text_chunks() -> None:
    document = _manual()
    toc = [u for _, u in _units(document) if u.content_kind == "toc"]
    assert len(toc) == 1 and toc[0].page == 2 and ". . ." in toc[0].text
    assert document.metadata["toc_units"] == 1
    for chunk in _leveler().chunk(document):
        assert (chunk.content_kind == "toc") == (". . ." in chunk.text)


def test_pdf_contents_page_without_leaders_or_outline_is_marked() -> None:
    # "Contents" above numbered headings with bare page numbers (no dot leaders), in a PDF
    # without bookmarks: the page is a contents page all the same.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fpdf2's note on the A5 size
        data = manual(outline=False, leaders=False)
    document = parse_bytes(data, kind="pdf", source_uri="mem://manual-bare-contents.pdf")
    toc = [u for _, u in _units(document) if u.content_kind == "toc"]
    assert len(toc) == 1 and toc[0].page == 2
    assert toc[0].text.split("\n") == [
        "Contents",
        "1 Pruning 3",
        "1.1 Winter pruning 3",
        "2 Harvest 4",
        "2.1 Storing 5",
    ]
    for chunk in _leveler().chunk(document):
        assert (chunk.content_kind == "toc") == ("Winter pruning 3" in chunk.text)


def test_contents_lines_without_leaders_need_a_run_with_pages_in_order() -> None:
    entries = ["1 Introduction 1", "1.1 A note on terminology 3", "2 The layout of formal tables 3"]
    assert contents_lines(["Contents", *entries]) == [True] * 4
    assert contents_lines(["Contents", "", *entries]) == [True, False, True, True, True]
    # Untitled, three entries are not enough; five are.
    assert contents_lines(entries) == [False] * 3
    more = [*entries, "3 Use of the new commands 4", "4 Abuse of the new commands 8"]
    assert contents_lines(more) == [True] * 5
    # A table's numbered rows (figures, not words) and steps whose last figures go back are not.
    rows = ["1.1 P 23646 1 45190 1", "2.1 CC 26174 1 35535 2", "3.1 CC 27723 1 25691 3"]
    assert contents_lines(["Contents", *rows]) == [False] * 4
    steps = [
        "1 Preheat the oven to 180",
        "2 Mix flour and sugar 2",
        "3 Add the eggs 3",
        "4 Bake for 25",
        "5 Serve 1",
    ]
    assert contents_lines(steps) == [False] * 5


def test_pdf_paragraph_across_a_page_break_is_one_unit_on_both_pages() -> None:
    document = _manual()
    joined = [u for _, u in _units(document) if u.last_page is not None]
    assert len(joined) == 1
    unit = joined[0]
    assert (unit.page, unit.last_page, unit.pages) == (4, 5, (4, 5))
    assert "Pears are picked before they\nare ripe and left" in unit.text
    assert document.metadata["paragraphs_joined_across_pages"] == 1
    parents = [c for c in _leveler().chunk(document) if c.level == 1 and "before they\nare ripe" in c.text]
    assert parents and {4, 5} <= set(parents[0].provenance.pages)


def test_pdf_footnote_is_a_unit_apart_from_the_body() -> None:
    document = _manual()
    units = _units(document)
    notes = [u for _, u in units if u.content_kind == "footnote"]
    assert [n.text for n in notes] == [FOOTNOTE]
    assert notes[0].page == 3
    assert not any("pruning calendar" in u.text for _, u in units if u.content_kind != "footnote")


def test_pdf_child_pages_are_the_pages_its_text_is_on() -> None:
    document = _manual()
    units = [u for _, u in _units(document)]

    def pages_of(line: str) -> list[set[int]]:
        return [set(u.pages) for u in units if line in u.text]

    chunks = _leveler(40).chunk(document)
    children = [c for c in chunks if c.level == 0]
    parents = {c.id: c for c in chunks if c.level == 1}
    narrower = [c for c in children if set(c.provenance.pages) < set(parents[c.parent_id].provenance.pages)]
    assert narrower  # before: every child reported its parent's pages
    for child in children:
        claimed = set(child.provenance.pages)
        found = [pages_of(line) for line in child.text.split("\n") if line]
        # Every line's pages are claimed (a line in one unit only), every claimed page has a line.
        assert all(options[0] <= claimed for options in found if len(options) == 1), child.text[:60]
        assert claimed <= set().union(*(p for options in found for p in options)), child.text[:60]


def test_running_lines_keep_larger_headings_and_drop_masked_repeats() -> None:
    pages = [
        [
            Line(f"Debian Reference {n} / 261", 9.0, 800.0),
            Line(
                "Chapter 1" if n == 2 else f"Body text of page {n} goes on here.",
                20.0 if n == 2 else 10.0,
                760.0,
            ),
            Line("More body text that is long enough to be a paragraph line.", 10.0, 740.0),
            Line("And a third line of body text on this page of the book.", 10.0, 720.0),
            Line(str(n), 10.0, 40.0),
        ]
        for n in range(1, 6)
    ]
    dropped = running_lines(pages, body_size(pages))
    assert all({0, 4} <= d for d in dropped)
    assert 1 not in dropped[1]  # "Chapter 1", set large, stays


def test_contents_lines_recognise_dot_leaders_and_index_entries() -> None:
    lines = [
        "2.3 Data Interchange Format (DIF). . . . . . 11",
        "apt, 37",
        "\\caption 157, 159",
        "A",
        "prose line",
    ]
    assert contents_lines(lines) == [True, True, True, True, False]


def test_a_two_dot_leader_after_a_question_is_a_contents_line() -> None:
    """debian-faq's contents: a long question leaves room for two dots before its page."""
    lines = [
        "GNU/Linux for the guts of a Linux system and add my own applications on top of it? . . 59",
        "and that is the end of it, etc. . 59",
        "see the note. 5",
    ]
    assert contents_lines(lines) == [True, False, False]


def test_on_a_contents_page_only_a_title_above_the_first_entry_is_marked() -> None:
    """booktabs' "Change History" page begins with the last lines of the code listing and of
    a paragraph: they stay text; the title line and the entries are contents."""
    texts = [
        "current \\cmidrule, and if so set the flag. Otherwise, \\morecmidrules itself does\nnothing.",
        "149 \\def\\morecmidrules{\\noalign{\\relax}}\n150 h/packagei",
        "Change History",
        "v1.618 \\@xcmidrule: Change to . . . . . . . 15",
        "General: Remove\n\\@cmidrulewidth . . . . . . . . . 10",
        "\\toprule: Change . . . . . . . . . 11",
        "v1.61803\n\\@BTrule: Restore",
        "\\@cmidrulea: add colortbl . . . . 12",
        "(Herbert Voss) . . . . . . . . . . . 11",
    ]
    parts = PageParts(body=[Block(text=text, page=16) for text in texts])
    assert mark_contents(parts) == 7
    assert [block.kind for block in parts.body] == ["text", "text", *["toc"] * 7]


def _cjk_pages() -> list[list[Line]]:
    """Two pages of a Chinese text: a paragraph cut by the page break mid-sentence, then a
    short last line ending in 。 above a date line."""
    full = "人人生而自由在尊严和权利上一律平等他们赋有理性和良心并应以兄弟关系"
    return [
        [
            Line(f"{full}的精神相对待。{full}", 10.0, 800.0),
            Line(f"{full}的精神相对待。{full}", 10.0, 780.0),
            Line(f"{full}的精神相对待。{full}", 10.0, 760.0),
            Line(f"这是一个很长的句子它在这一页的末尾没有结束而是在下一页继续{full}", 10.0, 740.0),
        ],
        [
            Line(f"的精神相对待{full}的精神相对待。他们赋有理性和良心并应以兄弟关系的精", 10.0, 800.0),
            Line("神相对待。", 10.0, 780.0),
            Line("2022年 11 月 29 日", 10.0, 760.0),
        ],
    ]


def test_pdf_cjk_paragraph_cut_by_a_page_break_is_joined() -> None:
    # CJK has no lower case: a CJK letter on both sides of the break says the sentence goes on,
    # so no chunk ends mid-sentence at the page break.
    pages = _cjk_pages()
    parts = [page_blocks(lines, set(), number, 10.0) for number, lines in enumerate(pages, 1)]
    assert join_across_pages(parts) == 1
    paragraph = parts[0].body[-1]
    assert (paragraph.page, paragraph.last_page) == (1, 2)
    assert "在下一页继续" in paragraph.text and "神相对待。" in paragraph.text


def test_outline_entry_between_two_lines_starts_a_paragraph_there() -> None:
    # debian-faq.en.pdf page 30: a note mark above the heading, no sentence end and no capital
    # between them; the entry's top lies between the two lines. Without the anchor the heading
    # stays in the paragraph of the mark, under the section before it.
    lines = [
        Line("door who destroyed toys :-)", 10.0, 308.2),
        Line("", None, None),
        Line("1", 7.0, 297.0),
        Line("6.4 What does the stable directory contain?", 14.3, 263.1),
        Line("• stable/main/: This directory contains the packages which formally constitute", 10.0, 236.4),
        Line("the most recent release of the Debian GNU/Linux system. These packages comply", 10.0, 224.0),
        Line("with the Debian Free Software Guidelines, and are all freely usable and shared.", 10.0, 212.0),
    ]
    title = "What does the stable directory contain?"
    entry = OutlineEntry(path=("The Debian archives", title), page=30, top=270.5)
    assert [b.text for b in page_blocks(lines, set(), 30, 10.0).body][1] == (
        "1\n6.4 What does the stable directory contain?"
    )
    blocks = page_blocks(lines, set(), 30, 10.0, [entry.top]).body
    assert [b.text for b in blocks] == [
        "door who destroyed toys :-)",
        "1",
        "6.4 What does the stable directory contain?",
        "\n".join(line.text for line in lines[4:]),
    ]
    paths = section_paths(blocks, [OutlineEntry(path=("The Debian archives",), page=29, top=500.0), entry])
    assert paths == [("The Debian archives",)] * 2 + [entry.path] * 2
    # An entry above both lines (or below both) breaks nothing between them.
    assert len(page_blocks(lines[2:4], set(), 30, 10.0, [400.0, 100.0]).body) == 1


def test_pdf_heading_lines_sit_in_their_own_sections(corpus_dir: Path) -> None:
    # Every line that is an outline entry's title is in that entry's section, not the one before.
    document = parse_file(corpus_dir / "pdf" / "debian-faq.en.pdf")
    misplaced = []
    for section in document.sections:
        for unit in section.units:
            for line in unit.text.split("\n"):
                for other in document.sections:
                    title = other.heading_path[-1] if other.heading_path else ""
                    if len(title) > 8 and line.strip().endswith(title) and line[:8].strip()[:1].isdigit():
                        if other is not section:
                            misplaced.append(line)
                        break
    assert not misplaced


def test_pdf_short_cjk_line_ending_a_sentence_ends_its_paragraph() -> None:
    parts = page_blocks(_cjk_pages()[1], set(), 2, 10.0)
    texts = [block.text for block in parts.body]
    assert texts[-1] == "2022年 11 月 29 日"
    assert texts[-2].endswith("神相对待。")


@pytest.mark.parametrize(
    ("line", "clean"),
    [
        # debian-faq.en.pdf: LaTeX's opening quote as a grave accent on a no-break space.
        ("symlinks for \xa0\u0300frozen\u2019 packages", "symlinks for \u2018frozen\u2019 packages"),
        ("\u0300start\u2019, \xa0\u0300stop\u2019", "\u2018start\u2019, \u2018stop\u2019"),
        ("Why is it frozen\u2019? \u0300", "Why is it frozen\u2019?"),  # its word is on the next line
        ("caf\u0065\u0300 cr\u0065\u0300me", "caf\u0065\u0300 cr\u0065\u0300me"),  # on a letter: an accent
    ],
)
def test_a_grave_accent_on_no_letter_is_latexs_opening_quote(line: str, clean: str) -> None:
    assert _clean(line) == clean


@pytest.mark.parametrize("label", ["Note", "Tip", "Warning:"])
def test_an_admonition_label_on_its_own_line_starts_a_paragraph(label: str) -> None:
    # debian-reference's PDF: a full line ending a sentence goes on its paragraph, so the
    # "Note" below it ended that paragraph, and its chunk; the note went on without its label.
    wide = "The popcon data was downloaded on the second and holds the submissions of many reports."
    lines = [
        Line(wide, 10.0, 800.0),
        Line("and twenty-five architectures in all, as the survey says.", 10.0, 780.0),
        Line(label, 10.0, 760.0),
        Line("The archive holds fewer packages than the popcon data names.", 10.0, 740.0),
    ]
    blocks = [block.text for block in page_blocks(lines, set(), 1, 10.0).body]
    assert blocks[0].endswith("as the survey says.")
    assert any(text.startswith(label) for text in blocks[1:]), blocks


def test_pieces_of_large_math_delimiters_are_no_text() -> None:
    # xcolor.pdf: cmex's big parentheses came out as control characters and the Symbol font's
    # brace parts as private-use ones (198 of U+F8F4 alone), indexed as words.
    assert _clean("colorn + step\x01") == "colorn + step"
    assert _clean("step :=\uf8f1\uf8f4\uf8f4\uf8f2 grad\tif") == "step := grad\tif"
    assert _clean("U\x10hue◦") == "Uhue◦"


def test_a_decimal_on_a_notes_line_opens_no_note_and_a_listings_numbers_are_no_notes() -> None:
    # ctable.pdf: a note's second line began "2.68ex." and became note 2; a code listing's last
    # lines, numbered and set small ("272 %"), became notes of their own.
    body = [
        Line(f"Body line {n} of the page, long enough to be a paragraph line here.", 10.0, 800.0 - n * 20)
        for n in range(6)
    ]
    note = [
        Line("1 I did some measurements with and without the caption package: memoir 2.32ex;", 8.0, 100.0),
        Line("2.68ex. For the distances between bottom caption baselines I found 3.90ex.", 8.0, 90.0),
    ]
    notes = page_blocks([*body, *note], set(), 3, 10.0).footnotes
    assert [n.text for n in notes] == ["\n".join(line.text for line in note)]
    listing = [Line("272 %", 8.0, 100.0), Line("273 }", 8.0, 90.0)]
    parts = page_blocks([*body, *listing], set(), 16, 10.0)
    assert parts.footnotes == [] and "272 %" in parts.body[-1].text


def _first_page(*lines: tuple[str, int]) -> bytes:
    """A one-page PDF without a Title in its metadata: ``lines`` of (text, font size)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_creation_date(datetime(2024, 1, 1, tzinfo=UTC))
    pdf.add_page()
    for text, size in lines:
        pdf.set_font("Helvetica", size=size)
        pdf.multi_cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def test_a_pdf_without_a_title_in_its_metadata_takes_its_first_pages_title() -> None:
    """R-data.pdf and booktabs.pdf have no Title in their metadata, so their title, which leads
    every chunk's contextual text, was the file name ("R-data"), not "R Data Import/Export"
    set large on the first page. The first page's largest line (one to three in a row), at
    1.5 times the body or more, is the title; a page of equal large headings gives none."""
    body = "Data can be imported from many formats, and exported to as many again. " * 3
    titled = _first_page(
        ("R Data Import", 24), ("and Export", 24), ("R Core Team", 14), (body, 11), (body, 11)
    )
    document = parse_bytes(titled, kind="pdf", source_uri="file:///docs/R-data.pdf")
    assert document.title == "R Data Import and Export"
    headings = _first_page(("1 Import", 16), (body, 11), ("2 Export", 16), (body, 11))
    assert parse_bytes(headings, kind="pdf", source_uri="file:///docs/R-data.pdf").title == "R-data"
    small = _first_page(("R Data Import", 13), (body, 11), (body, 11))
    assert parse_bytes(small, kind="pdf", source_uri="file:///docs/R-data.pdf").title == "R-data"
