"""PDF: the text layer of each page via pypdfium2 (PDFium), in sections from the outline.

Units are paragraphs, footnotes and contents entries with ``page`` (1-based; ``last_page`` for a
paragraph that runs on over a page break) and no character offsets, so chunks get page
provenance. ``Document.text`` is the pages' kept text joined by form feeds, for reference only.
PDFium returns lines; each line's font size and top edge are read too, and
:mod:`chunking.parsers.pdf_layout` turns them into units: running headers, footers and page
numbers are left out (counted in ``metadata["running_lines_dropped"]``), footnotes are units of
their own (kind ``footnote``), contents and index pages get the kind ``toc``, paragraphs cut by
a page break are joined, and the outline (bookmarks) gives the sections and heading paths (none
without an outline: one section per page); a section's first paragraph is a ``heading`` unit when
it is its outline entry's title set on the page (``4.3 R interface packages``, or ``Chapter 1``
above the title). PDFium is not thread-safe, so all calls hold one lock.
"""

from __future__ import annotations

import re
import threading
from importlib.metadata import version

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from chunking.document import Document, Section, Unit
from chunking.errors import ParseError
from chunking.parsers.base import build_document, title_from_uri
from chunking.parsers.limits import ParseLimits, check_limit
from chunking.parsers.pdf_layout import (
    Block,
    Line,
    OutlineEntry,
    body_size,
    join_across_pages,
    mark_contents,
    page_blocks,
    running_lines,
    section_paths,
)
from chunking.parsers.plain_headings import MAX_HEADING_CHARS

__all__ = ["PARSER_VERSION", "parse"]

# 4: an outline entry's place on its page ends a paragraph (pdf_layout.py); 5: a grave accent on
# no letter before a word is the opening quote LaTeX meant (‘frozen’), elsewhere dropped; 6: a
# two-dot leader after a "?" is a contents line, and on a contents page only a line above its
# first entry is taken for its title (the end of the text above a "Change History" is not); 7:
# an admonition's label on a line of its own ("Note", "Tip") starts a paragraph, and the pieces
# of large math delimiters (control and private-use characters) are dropped; a decimal opens no
# footnote, and small numbered lines without a letter (a listing's) are none; 8: a section's first
# paragraph is a heading when it is the outline entry's title; 9: without a Title in its metadata,
# a PDF's title is the first page's line set far larger than the body
PARSER_VERSION = "9"
LIBRARY = f"pypdfium2 {version('pypdfium2')}"
_LOCK = threading.Lock()


# A grave accent on no letter: how LaTeX's opening quote (`) comes out of some Type 1 fonts,
# after a no-break space ("for \xa0\u0300frozen’"). Before a word it is that quote; elsewhere
# it is dropped.
_LOOSE_GRAVE = re.compile(r"(?<![^\W\d_])\u00a0?\u0300(\w?)")


# What a PDF's math fonts give for the pieces of large delimiters: control characters (cmex's
# big parentheses) and the Symbol font's private-use brace and bracket parts (U+F8E5-U+F8FE).
# They draw, they do not read: a search would index them as words.
_GLYPH_PIECES = dict.fromkeys([*range(0x01, 0x09), *range(0x0B, 0x20), 0x7F, *range(0xF8E5, 0xF8FF)])


def _clean(text: str) -> str:
    # PDFium marks a soft hyphen it already joined with U+FFFE.
    text = text.replace("\ufffe", "").replace("\x00", "").replace("\f", " ").translate(_GLYPH_PIECES)
    if "\u0300" in text:
        text = _LOOSE_GRAVE.sub(lambda m: f"\u2018{m.group(1)}" if m.group(1) else "", text)
    return text.rstrip()


def _page_lines(textpage: pdfium.PdfTextPage) -> list[Line]:
    """The page's lines with the font size and top edge of a character in the middle of each."""
    raw = textpage.get_text_range()
    # Without surrogate pairs, string index i is PDFium character i (line breaks included).
    positioned = len(raw) == textpage.count_chars()
    lines: list[Line] = []
    position = 0
    for segment in raw.replace("\r\n", "\n\x00").replace("\r", "\n").split("\n"):
        length = len(segment)
        segment = segment.lstrip("\x00")
        offset = position + (length - len(segment))
        position += length + 1
        text = _clean(segment)
        size = top = None
        if positioned and text.strip():
            first = offset + len(segment) - len(segment.lstrip())
            middle = offset + len(segment) // 2
            if segment[middle - offset].isspace():
                middle = first
            size = round(pdfium_c.FPDFText_GetFontSize(textpage.raw, middle), 1) or None
            top = max(textpage.get_charbox(i)[3] for i in (first, middle))
        lines.append(Line(text, size, top))
    return lines


def _outline(pdf: pdfium.PdfDocument, page_count: int) -> list[OutlineEntry]:
    """Outline entries with a page: heading path (titles of the open entries), page, top."""
    entries: list[OutlineEntry] = []
    path: list[str] = []
    for bookmark in pdf.get_toc(max_depth=12):
        title = " ".join((bookmark.get_title() or "").split())
        del path[bookmark.level :]
        path.extend([""] * (bookmark.level - len(path)))
        path.append(title)
        dest = bookmark.get_dest()
        index = dest.get_index() if dest is not None else None
        if index is None or not 0 <= index < page_count or not title:
            continue
        _, view = dest.get_view()
        top = float(view[1]) if len(view) >= 2 and view[1] else None
        entries.append(OutlineEntry(path=tuple(p for p in path if p), page=index + 1, top=top))
    return entries


def _open(data: bytes, source_uri: str) -> pdfium.PdfDocument:
    if not data:
        raise ParseError(source_uri, "the file is empty", "check the file was written completely")
    if b"%PDF-" not in data[:1024]:
        raise ParseError(
            source_uri,
            "named as a PDF but not one (no %PDF- header)",
            "give the file the extension of its real format (.md, .html, .txt, .csv, .json), "
            "or replace it with the PDF",
        )
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.lower():
            raise ParseError(
                source_uri,
                "the PDF is encrypted with a password",
                "decrypt it first (for example qpdf --decrypt --password=... in.pdf out.pdf)",
            ) from exc
        raise ParseError(
            source_uri,
            f"the PDF is corrupt or truncated ({message})",
            "re-download or re-export the file",
        ) from exc


def _read_pages(pdf: pdfium.PdfDocument, page_count: int, source_uri: str) -> list[list[Line]]:
    pages: list[list[Line]] = []
    for number in range(1, page_count + 1):
        try:
            # Loading the page can fail too (a damaged page object), not only its text.
            page = pdf[number - 1]
        except pdfium.PdfiumError as exc:
            raise ParseError(
                source_uri,
                f"page {number} cannot be loaded ({exc}): the PDF is corrupt or truncated",
                "re-download or re-export the file",
            ) from exc
        try:
            textpage = page.get_textpage()
            try:
                pages.append(_page_lines(textpage))
            finally:
                textpage.close()
        except pdfium.PdfiumError as exc:
            raise ParseError(
                source_uri, f"page {number} cannot be read ({exc})", "re-export the PDF"
            ) from exc
        finally:
            page.close()
    return pages


def _sections(blocks: list[Block], outline: list[OutlineEntry], page_count: int) -> list[Section]:
    """Sections from the outline; without one, one section per page (empty heading path)."""

    def unit(block: Block) -> Unit:
        return Unit(text=block.text, content_kind=block.kind, page=block.page, last_page=block.last_page)

    if not outline:
        by_page: list[list[Unit]] = [[] for _ in range(page_count)]
        for block in blocks:
            by_page[block.page - 1].append(unit(block))
        return [Section(units=tuple(units)) for units in by_page]
    sections: list[Section] = []
    current: list[Unit] = []
    current_path: tuple[str, ...] | None = None
    for block, path in zip(blocks, section_paths(blocks, outline), strict=True):
        if path != current_path and current:
            sections.append(Section(heading_path=current_path or (), units=tuple(current)))
            current = []
        current_path = path
        current.append(unit(block))
    if current:
        sections.append(Section(heading_path=current_path or (), units=tuple(current)))
    return [
        section.model_copy(update={"units": _title_as_heading(section.units, section.heading_path[-1])})
        if section.heading_path
        else section
        for section in sections
    ]


def _first_page_title(lines: list[Line], body: float | None) -> str | None:
    """The title a PDF sets on its first page: its largest lines, one to three in a row, when
    set at :data:`_TITLE_SIZE` times the body size or more and no other line is as large (a
    page of equal section headings has none); None otherwise."""
    sized = [line for line in lines if line.text.strip() and line.size]
    if not sized or body is None:
        return None
    largest = max(line.size or 0.0 for line in sized)
    if largest < _TITLE_SIZE * body:
        return None
    run = [i for i, line in enumerate(sized) if line.size == largest]
    if len(run) > 3 or run[-1] - run[0] != len(run) - 1:
        return None  # several large lines apart: headings, not one title
    title = " ".join(" ".join(sized[i].text.split()) for i in run)
    return title if len(title) <= MAX_HEADING_CHARS and _LETTERS.search(title) else None


# A title is set this many times the body's font size or larger.
_TITLE_SIZE = 1.5
_LETTERS = re.compile(r"[^\W\d_]{2}")


def _title_as_heading(units: tuple[Unit, ...], title: str) -> tuple[Unit, ...]:
    """A section's units with the outline entry's title, as the page sets it at the section's
    start, made ``heading`` units, which the chunker keeps with what follows instead of leaving
    them at the end of the chunk before: the title's lines (after its number, ``4.3 R interface
    packages``), over one paragraph or two (a long title wraps), split off the paragraph they
    open, and a ``Chapter 1`` line above them. A contents page's loose lines may have been
    marked ``toc``; a title is a heading all the same."""
    start = 1 if len(units) > 1 and _DIVISION.fullmatch(units[0].text.strip()) else 0
    entry = _words(title)
    seen: list[str] = []
    for index in range(start, min(len(units), start + 2)):
        unit = units[index]
        if unit.content_kind not in ("text", "toc"):
            break
        lines = unit.text.split("\n")
        for count in range(1, len(lines) + 1):
            words = seen + _words("\n".join(lines[:count]))
            if len(words) > len(entry) + 1:
                return units  # past the title and a number: the section opens with text
            if _names(words, entry, (units[start].text.split() or [""])[0]):
                heading = "\n".join(lines[:count])
                made = [u.model_copy(update={"content_kind": "heading"}) for u in units[:index]]
                made.append(unit.model_copy(update={"text": heading, "content_kind": "heading"}))
                if count < len(lines):
                    made.append(unit.model_copy(update={"text": "\n".join(lines[count:])}))
                return (*made, *units[index + 1 :])
        seen += _words(unit.text)
    return units


def _names(words: list[str], entry: list[str], first: str) -> bool:
    """Whether ``words`` are the entry's title, alone or after a section number (``first``, the
    first word as written, is that number: ``4.3``, ``A.1``, ``Appendix``)."""
    lead = len(words) - len(entry)
    if not entry or lead not in (0, 1) or words[lead:] != entry:
        return False
    return lead == 0 or _SECTION_NUMBER.fullmatch(first) is not None


def _words(text: str) -> list[str]:
    return [word for word in (_NOT_WORD.sub("", w).casefold() for w in text.split()) if word]


_NOT_WORD = re.compile(r"[\W_]+")
# A section's number before its title on the page (``4.3``, ``A.1``, ``IV.``), and a division's
# line above the title (``Chapter 1``, ``Appendix A``).
_SECTION_NUMBER = re.compile(r"(?:\d+|[A-Z]|[IVXLC]+)(?:\.\d+)*\.?|Appendix|Chapter|Part", re.IGNORECASE)
_DIVISION = re.compile(r"(?:Chapter|Appendix|Part)\s+(?:\d+|[A-Z]|[IVXLC]+)\.?", re.IGNORECASE)


def parse(data: bytes, source_uri: str, limits: ParseLimits) -> Document:
    """Parse PDF bytes into a paged document (see the module docstring for the layout).

    Raises:
        ParseError: Not a PDF, encrypted, corrupt or truncated, over ``limits.max_pages``, or no
            text layer on any page.
    """
    with _LOCK:
        pdf = _open(data, source_uri)
        try:
            page_count = len(pdf)
            check_limit(source_uri, "max_pages", page_count, limits, "pages")
            pdf_title = (pdf.get_metadata_dict().get("Title") or "").strip()
            pages = _read_pages(pdf, page_count, source_uri)
            outline = _outline(pdf, page_count)
        finally:
            pdf.close()
    body = body_size(pages)
    dropped = running_lines(pages, body)
    anchors: list[list[float]] = [[] for _ in pages]
    for entry in outline:
        if entry.top is not None:
            anchors[entry.page - 1].append(entry.top)
    parts = [page_blocks(lines, dropped[i], i + 1, body, anchors[i]) for i, lines in enumerate(pages)]
    toc_units = sum(mark_contents(p) for p in parts)
    joined = join_across_pages(parts)
    blocks = [block for p in parts for block in (*p.body, *p.footnotes)]
    page_texts = ["\n\n".join(b.text for b in (*p.body, *p.footnotes)) for p in parts]
    return build_document(
        raw=data,
        kind="pdf",
        parser_version=PARSER_VERSION,
        source_uri=source_uri,
        text="\f".join(page_texts),
        sections=_sections(blocks, outline, page_count),
        title=pdf_title or _first_page_title(pages[0] if pages else [], body) or title_from_uri(source_uri),
        metadata={
            "encoding": "binary",
            "parser": LIBRARY,
            "page_count": page_count,
            "outline_entries": len(outline),
            "running_lines_dropped": sum(len(d) for d in dropped),
            "footnotes": sum(len(p.footnotes) for p in parts),
            "toc_units": toc_units,
            "paragraphs_joined_across_pages": joined,
        },
    )
