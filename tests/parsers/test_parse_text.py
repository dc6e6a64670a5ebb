"""Plain-text parser: paragraphs with offsets into the original, pages and furniture."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.errors import ParseError
from chunking.parsers import parse_bytes, parse_file
from tests.example_budget import examples
from tests.parsers.conftest import assert_exact_offsets

RFC_PAGE = (
    "   Body text of page {n} that goes on\n   for two lines.\n\n\n\n"
    "Zeilenga                    Standards Track                     [Page {n}]\n"
    "\f\n"
    "RFC 4510                   LDAP: TS Road Map                   June 2006\n\n\n"
)


def test_text_paragraphs_keep_original_text_and_offsets(sample_dir: Path) -> None:
    raw = (sample_dir / "lighthouse-log.txt").read_text("utf-8")
    document = parse_file(sample_dir / "lighthouse-log.txt")
    assert document.text == raw
    units = document.sections[0].units
    assert units[0].text == "The Keeper's Log, Autumn"
    assert len(units) == 6
    assert_exact_offsets(document)
    assert document.title == "lighthouse-log"


def test_text_crlf_is_normalized_then_offsets_point_into_it() -> None:
    document = parse_bytes(b"one\r\ntwo\r\n\r\nthree\r\n", kind="text", source_uri="mem://c.txt")
    assert document.text == "one\ntwo\n\nthree\n"
    assert [u.text for u in document.sections[0].units] == ["one\ntwo", "three"]
    assert_exact_offsets(document)


def test_text_form_feeds_and_rfc_page_lines_stay_out_of_units() -> None:
    raw = "".join(RFC_PAGE.format(n=n) for n in range(1, 5)).encode()
    document = parse_bytes(raw, kind="text", source_uri="mem://rfc.txt")
    units = document.sections[0].units
    assert all("\f" not in u.text for u in units)
    assert [u.text for u in units] == [
        f"Body text of page {n} that goes on\n   for two lines." for n in range(1, 5)
    ]
    assert document.metadata["page_lines_dropped"] == 8
    assert document.metadata["page_count"] == 5
    assert_exact_offsets(document)


def test_text_file_without_blank_lines_splits_long_runs_into_lines() -> None:
    raw = "\n".join(f"Verse {n} of a long book without blank lines." for n in range(400)).encode()
    document = parse_bytes(raw, kind="text", source_uri="mem://verses.txt")
    units = document.sections[0].units
    assert len(units) == 400
    assert units[3].text == "Verse 3 of a long book without blank lines."
    assert_exact_offsets(document)


def _headings(document) -> list[tuple[tuple[str, ...], str]]:
    return [
        (s.heading_path, u.text) for s in document.sections for u in s.units if u.content_kind == "heading"
    ]


def test_text_numbered_outline_opens_sections() -> None:
    raw = (
        "Preface without a heading.\n\n1.  Introduction\n\nWhy this exists.\n\n"
        "1.1.  Conventions\n\nKey words.\n\n2.  Protocol Model\n\nClients and servers.\n"
    )
    document = parse_bytes(raw.encode(), kind="text", source_uri="mem://rfc.txt")
    assert [(s.heading_path, [u.text for u in s.units]) for s in document.sections] == [
        ((), ["Preface without a heading."]),
        (("1. Introduction",), ["1.  Introduction", "Why this exists."]),
        (("1. Introduction", "1.1. Conventions"), ["1.1.  Conventions", "Key words."]),
        (("2. Protocol Model",), ["2.  Protocol Model", "Clients and servers."]),
    ]
    assert_exact_offsets(document)


def test_text_appendices_continue_the_outline() -> None:
    # rfc4511.txt: without these, the result codes, the ASN.1 module and the change log were
    # all filed under "10. IANA Considerations".
    raw = (
        "1.  Introduction\n\nText.\n\n2.  Model\n\nText.\n\n3.  Security\n\nText.\n\n"
        "Appendix A.  LDAP Result Codes\n\nCodes.\n\nA.1.  Non-Error Result Codes\n\nSuccess.\n\n"
        "A.2.  Result Codes\n\nErrors.\n\nAppendix B: Changes Since RFC 2254\n\nChanges.\n\n"
        "B.1.1.  Section 4 (Elements)\n\nMore.\n\n"
        # Not appendix headings: a letter out of order, a section of another appendix.
        "Appendix D.  Skipped\n\nText.\n\nA.3.  Late\n\nText.\n"
    )
    document = parse_bytes(raw.encode(), kind="text", source_uri="mem://rfc.txt")
    paths = {u.text: s.heading_path for s in document.sections for u in s.units}
    assert paths["Success."] == ("Appendix A. LDAP Result Codes", "A.1. Non-Error Result Codes")
    assert paths["Errors."] == ("Appendix A. LDAP Result Codes", "A.2. Result Codes")
    assert paths["Changes."] == ("Appendix B: Changes Since RFC 2254",)
    assert paths["More."] == ("Appendix B: Changes Since RFC 2254", "B.1.1. Section 4 (Elements)")
    assert paths["Appendix D.  Skipped"] == paths["A.3.  Late"] == paths["More."]
    assert_exact_offsets(document)


def test_text_appendix_lines_without_an_outline_open_no_section() -> None:
    raw = "Notes.\n\nAppendix A.  Tables\n\nText.\n\nA.1.  First\n\nText.\n"
    document = parse_bytes(raw.encode(), kind="text", source_uri="mem://notes.txt")
    assert len(document.sections) == 1 and not _headings(document)


@pytest.mark.parametrize(
    "raw",
    [
        # A play's numbered speakers: no outline from 1.
        "3. That will be ere the set of Sunne\n\nAll. Faire is foule.\n\n1. I come, Gray-Malkin\n\n"
        "Speech.\n\n2. Ile giue thee a Winde\n\nSpeech.\n",
        # Numbered paragraphs one after another: a list.
        "Shopping:\n\n1. Milk\n\n2. Eggs\n\n3. Bread\n\nThat is all.\n",
        # Two numbered lines are too few to be an outline.
        "1. Definitions.\n\nText.\n\n2. Grant of License.\n\nText.\n",
    ],
)
def test_text_numbered_lines_that_are_no_outline_open_no_section(raw: str) -> None:
    document = parse_bytes(raw.encode(), kind="text", source_uri="mem://t.txt")
    assert len(document.sections) == 1
    assert not _headings(document)


def test_text_underlined_and_wikitext_headings() -> None:
    raw = (
        "Lighthouse Manual\n=================\n\nIntro text.\n\nLamps\n-----\n\nOil lamps.\n\n"
        "= = Keepers = =\n\nThe keepers.\n\nA long line of text that is no heading at all\n---\n\nEnd.\n"
    )
    document = parse_bytes(raw.encode(), kind="text", source_uri="mem://m.txt")
    assert _headings(document) == [
        (("Lighthouse Manual",), "Lighthouse Manual\n================="),
        (("Lighthouse Manual", "Lamps"), "Lamps\n-----"),
        (("Lighthouse Manual", "Keepers"), "= = Keepers = ="),
    ]
    assert document.sections[-1].units[-1].text == "End."
    assert document.title == "Lighthouse Manual"
    assert_exact_offsets(document)


def test_text_title_is_a_level_one_heading_at_the_start_only() -> None:
    numbered = "1.  Introduction\n\nText.\n\n2.  Model\n\nText.\n\n3.  Security\n\nText.\n"
    late = (
        "A first paragraph.\n\n" + "Another paragraph of the preface. " * 20 + "\n\nManual\n======\n\nText.\n"
    )
    articles = "".join(f"= Article {n} =\n\nText {n}.\n\n" for n in range(3))
    for raw in (numbered, late, articles):
        document = parse_bytes(raw.encode(), kind="text", source_uri="mem://notes.txt")
        assert document.title == "notes", raw[:40]
    document = parse_bytes(b"= Lighthouse =\n\nText.\n", kind="text", source_uri="mem://notes.txt")
    assert document.title == "Lighthouse"


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=2), min_size=3, max_size=12),
    st.lists(
        st.sampled_from(["Body text here.", "More words, and a clause.", "x = 1"]), min_size=12, max_size=12
    ),
)
def test_text_outline_headings_label_only_what_follows(steps: list[int], bodies: list[str]) -> None:
    """Any outline (each step: a first child, a next sibling, or back up one level) with body
    text under each heading: every numbered line is a heading at its depth, its section holds
    it and the body after it, and the preamble before the first heading has no path."""
    numbers: list[tuple[int, ...]] = [(1,)]
    for step in steps[1:]:
        last = numbers[-1]
        if step == 0 and len(last) < 3:
            numbers.append((*last, 1))
        elif step == 2 and len(last) > 1:
            numbers.append((*last[:-2], last[-2] + 1))
        else:
            numbers.append((*last[:-1], last[-1] + 1))
    lines = ["Preamble."]
    for number, body in zip(numbers, bodies, strict=False):
        lines += [".".join(map(str, number)) + ".  Part " + "abc"[len(number) - 1], body]
    document = parse_bytes("\n\n".join(lines).encode(), kind="text", source_uri="mem://o.txt")
    assert document.sections[0].heading_path == ()
    assert [u.text for u in document.sections[0].units] == ["Preamble."]
    headed = document.sections[1:]
    assert len(headed) == len(numbers)
    for section, number in zip(headed, numbers, strict=True):
        assert len(section.heading_path) == len(number)
        assert section.units[0].content_kind == "heading"
        assert [u.content_kind for u in section.units[1:]] == ["text"]
    assert_exact_offsets(document)


BLANK = "check the file is not blank: it holds only whitespace, markup or a byte-order mark"


@pytest.mark.parametrize(
    ("raw", "hint"),
    [
        (b"\xef\xbb\xbf", BLANK),
        (b"\xef\xbb\xbf \n\n\t\n", BLANK),
        (
            b"Zeilenga      Standards Track      [Page 1]\n",
            "every paragraph (1) is a page header, footer or page mark, which are left out",
        ),
    ],
    ids=["bom", "bom-and-blanks", "furniture"],
)
def test_text_without_a_paragraph_gets_a_hint_for_a_text_file(raw: bytes, hint: str) -> None:
    """Not the PDF's hint (no text layer, OCR): a text file has neither."""
    with pytest.raises(ParseError) as info:
        parse_bytes(raw, kind="text", source_uri="mem://only-bom.txt")
    assert (info.value.reason, info.value.hint) == ("no text found in this text file", hint)
    assert "PDF" not in str(info.value)


@pytest.mark.parametrize("kind", ["markdown", "html", "csv"])
def test_a_blank_file_of_any_kind_but_pdf_gets_no_ocr_hint(kind: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_bytes(b"\xef\xbb\xbf \n", kind=kind, source_uri=f"mem://blank.{kind}")
    assert info.value.hint == BLANK


GUTENBERG = """The Project Gutenberg eBook of The Orchard, by A. Keeper

This eBook is for the use of anyone anywhere at no cost and with almost no
restrictions whatsoever.

Title: The Orchard

Author: A. Keeper

*** START OF THE PROJECT GUTENBERG EBOOK THE ORCHARD ***

Chapter 1

The apples came in early that year.

Chapter 2

The pears came in late.

*** END OF THE PROJECT GUTENBERG EBOOK THE ORCHARD ***

Updated editions will replace the previous one.

Section 1. General Terms of Use and Redistributing Project Gutenberg electronic works
"""

OLD_GUTENBERG = """The Project Gutenberg Etext of The Orchard by A. Keepr

Please take a look at the important information in this header.

***START**THE SMALL PRINT!**FOR PUBLIC DOMAIN ETEXTS**START***
Why is this "Small Print!" statement here?  You know: lawyers.
*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.29.93*END*


The Project Gutenberg Etext of The Orchard by A. Keeper

The apples came in early that year.

End of the Project Gutenberg Etext of The Orchard
"""


@pytest.mark.parametrize(
    ("raw", "units", "title", "dropped"),
    [
        (
            GUTENBERG,
            ["Chapter 1", "The apples came in early that year.", "Chapter 2", "The pears came in late."],
            "The Orchard",
            8,  # the header's four paragraphs and start line; the end line and the licence's two
        ),
        (
            OLD_GUTENBERG,
            [
                "The Project Gutenberg Etext of The Orchard by A. Keeper",
                "The apples came in early that year.",
            ],
            "The Orchard by A. Keeper",
            4,  # the header's two paragraphs and small print; the end line
        ),
    ],
)
def test_a_project_gutenberg_book_leaves_out_its_header_and_licence(
    raw: str, units: list[str], title: str, dropped: int
) -> None:
    # The corpus's Gutenberg books had their header, small print and licence indexed: a search
    # for the book's themes returned "Small Print!" and donation paragraphs.
    document = parse_bytes(raw.encode(), kind="text", source_uri="mem://orchard.txt")
    assert document.text == raw  # the wrapping stays in the text; only the units leave it out
    assert [u.text for section in document.sections for u in section.units] == units
    assert document.title == title
    assert document.metadata["gutenberg_paragraphs_dropped"] == dropped
    assert_exact_offsets(document)


def test_a_text_that_names_project_gutenberg_without_its_markers_keeps_every_paragraph() -> None:
    raw = "Project Gutenberg offers free books.\n\nThey are in the public domain.\n"
    document = parse_bytes(raw.encode(), kind="text", source_uri="mem://pg.txt")
    assert [u.text for u in document.sections[0].units] == [
        "Project Gutenberg offers free books.",
        "They are in the public domain.",
    ]
    assert "gutenberg_paragraphs_dropped" not in document.metadata


def test_the_corpus_gutenberg_books_index_no_licence(corpus_dir: Path) -> None:
    books = sorted((corpus_dir / "text").glob("gutenberg-*.txt"))
    if not books:
        pytest.skip("the shared corpus has no Gutenberg books")
    for path in books:
        document = parse_file(path)
        texts = [u.text for section in document.sections for u in section.units]
        assert not [t for t in texts if "SMALL PRINT" in t.upper() or "gutenberg.net" in t.lower()], path.name
        assert document.metadata["gutenberg_paragraphs_dropped"] > 20, path.name
        assert "gutenberg" not in document.title.lower(), path.name


RFC_CONTENTS = """Network Working Group                                  J. Author
Request for Comments: 9999                                   June 2006

Table of Contents

   1. Introduction ....................................................3
      1.1. Relationship to Other Specifications ......................3
   2. Protocol Model ..................................................4
      2.1. Operation and LDAP Messages ...............................5
           Usage with LDAP ExtendedRequest and
                   ExtendedResponse ..................................40
   Appendix A. Result Codes ...........................................49

1. Introduction

   The protocol is described in sections 2 and 3.

   Steps to follow:
   1. Open a session 3
   2. Bind 4

2. Protocol Model

   Clients send requests.

3. Security Considerations

   None.
"""


def test_text_contents_paragraphs_are_toc_units() -> None:
    """An RFC's table of contents was four text children of rfc4511, whose keyword-dense
    entries ("4.2. Bind Operation .......16") competed in search with the sections they list.
    A paragraph of contents lines is a ``toc`` unit, as on a PDF's contents page, and so is
    the "Table of Contents" line above it; a numbered list whose items end in figures is not,
    and the outline's headings still open sections."""
    document = parse_bytes(RFC_CONTENTS.encode(), kind="text", source_uri="mem://rfc9999.txt")
    assert_exact_offsets(document)
    units = [
        (s.heading_path, u.content_kind, u.text.split("\n")[0].strip())
        for s in document.sections
        for u in s.units
    ]
    assert units == [
        ((), "text", "Network Working Group                                  J. Author"),
        ((), "toc", "Table of Contents"),
        ((), "toc", "1. Introduction ....................................................3"),
        (("1. Introduction",), "heading", "1. Introduction"),
        (("1. Introduction",), "text", "The protocol is described in sections 2 and 3."),
        (("1. Introduction",), "text", "Steps to follow:"),
        (("2. Protocol Model",), "heading", "2. Protocol Model"),
        (("2. Protocol Model",), "text", "Clients send requests."),
        (("3. Security Considerations",), "heading", "3. Security Considerations"),
        (("3. Security Considerations",), "text", "None."),
    ]


def _body(words: str) -> str:
    """An indented paragraph of three lines, as an RFC sets its body."""
    return f"   {words} is specified here\n   in a paragraph of three lines\n   set off from the margin."


def _bodies(words: str) -> str:
    return "\n\n".join(_body(f"{words} ({n})") for n in range(4))


RFC_LAYOUT = f"""Network Working Group                                  J. Author
Request for Comments: 9999                                   June 2006

Status of This Memo

{_bodies("This memo")}

Abstract

{_bodies("The protocol")}

1.  Introduction

{_bodies("The introduction")}

2.  Model

{_bodies("The model")}

3.  Security Considerations

{_bodies("Security")}

Author's Address

   J. Author
   Example Org
"""


def test_text_margin_lines_of_an_indented_document_are_headings() -> None:
    """rfc2849's, rfc4510's and rfc4511's "Status of This Memo", "Abstract", "Full Copyright
    Statement" were paragraphs like any other: whatever followed them had no heading path, or
    the last numbered section's. Where every paragraph of several lines is indented, a short
    line at the margin is a level-1 heading beside the numbered outline; a play's stage
    directions at the margin of its verse, or prose with no indented body, gain none."""
    document = parse_bytes(RFC_LAYOUT.encode(), kind="text", source_uri="mem://rfc.txt")
    assert_exact_offsets(document)
    paths = [s.heading_path for s in document.sections]
    assert paths == [
        (),
        ("Status of This Memo",),
        ("Abstract",),
        ("1. Introduction",),
        ("2. Model",),
        ("3. Security Considerations",),
        ("Author's Address",),
    ]
    # The same lines with the body at the margin: nothing says they are headings.
    flat = "\n".join(line.strip() for line in RFC_LAYOUT.split("\n")).encode()
    flat_paths = [
        s.heading_path for s in parse_bytes(flat, kind="text", source_uri="mem://flat.txt").sections
    ]
    assert ("Abstract",) not in flat_paths and ("Author's Address",) not in flat_paths
    speeches = "\n\n".join(f"Macb. Line {n} of the verse,\n   and its second line" for n in range(12))
    play = f"{speeches}\n\nExeunt\n\n{speeches}\n\nAlarum\n\n{speeches}\n".encode()
    play_document = parse_bytes(play, kind="text", source_uri="mem://play.txt")
    assert [s.heading_path for s in play_document.sections] == [()]
