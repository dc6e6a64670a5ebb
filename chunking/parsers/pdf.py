"""PDF: the text layer of each page via pypdfium2 (PDFium), one section per page.

Units are paragraphs of a page with ``page`` set (1-based) and no character offsets, so chunks
get page provenance. ``Document.text`` is the pages' text joined by form feeds, for reference
only. PDFium returns lines, not paragraphs: a paragraph ends at a blank line, or after a line
that is clearly short for the page (under 75% of its usual width) and ends a sentence or is
followed by a line starting with a capital. Tables
come out as their lines of text. PDFium is not thread-safe, so all calls hold one lock.
"""

from __future__ import annotations

import re
import threading
from importlib.metadata import version

import pypdfium2 as pdfium

from chunking.document import Document, Section, Unit
from chunking.errors import ParseError
from chunking.parsers.base import build_document, title_from_uri
from chunking.parsers.limits import ParseLimits, check_limit

__all__ = ["PARSER_VERSION", "parse"]

PARSER_VERSION = "1"
LIBRARY = f"pypdfium2 {version('pypdfium2')}"
_LOCK = threading.Lock()
_SENTENCE_END = re.compile(r"[.!?:;)\]\"'”’]$")
_SHORT = 0.75


def _lines(raw: str) -> list[str]:
    # PDFium marks a soft hyphen it already joined with U+FFFE, and ends lines with CRLF.
    text = raw.replace("\ufffe", "").replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    return [line.rstrip() for line in text.replace("\f", "\n").split("\n")]


def _paragraphs(lines: list[str]) -> list[str]:
    """Group a page's lines into paragraphs (see the module docstring for the rule)."""
    lengths = sorted(len(line) for line in lines if line.strip())
    if not lengths:
        return []
    usual = max(lengths[int(len(lengths) * 0.9) - (1 if len(lengths) > 1 else 0)], 40)
    paragraphs: list[str] = []
    current: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip():
            if current:
                paragraphs.append("\n".join(current))
                current = []
            continue
        current.append(line)
        following = lines[index + 1].lstrip() if index + 1 < len(lines) else ""
        short = len(line.strip()) < usual * _SHORT
        # A short line ends a paragraph when it ends a sentence, or when the next line opens
        # one with a capital (a heading above its first paragraph).
        if short and (_SENTENCE_END.search(line) or following[:1].isupper()):
            paragraphs.append("\n".join(current))
            current = []
    if current:
        paragraphs.append("\n".join(current))
    return [p.strip() for p in paragraphs if p.strip()]


def _open(data: bytes, source_uri: str) -> pdfium.PdfDocument:
    if not data:
        raise ParseError(source_uri, "the file is empty", "check the file was written completely")
    if b"%PDF-" not in data[:1024]:
        raise ParseError(source_uri, "not a PDF (no %PDF- header)", "pass the right kind= for this file")
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


def parse(data: bytes, source_uri: str, limits: ParseLimits) -> Document:
    """Parse PDF bytes into a paged document: one section per page, paragraph units with pages.

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
            page_texts: list[str] = []
            sections: list[Section] = []
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
                        lines = _lines(textpage.get_text_range())
                    finally:
                        textpage.close()
                except pdfium.PdfiumError as exc:
                    raise ParseError(
                        source_uri, f"page {number} cannot be read ({exc})", "re-export the PDF"
                    ) from exc
                finally:
                    page.close()
                paragraphs = _paragraphs(lines)
                page_texts.append("\n\n".join(paragraphs))
                sections.append(Section(units=tuple(Unit(text=p, page=number) for p in paragraphs)))
        finally:
            pdf.close()
    return build_document(
        raw=data,
        kind="pdf",
        parser_version=PARSER_VERSION,
        source_uri=source_uri,
        text="\f".join(page_texts),
        sections=sections,
        title=pdf_title or title_from_uri(source_uri),
        metadata={"encoding": "binary", "parser": LIBRARY, "page_count": page_count},
    )
