"""Measure what the parsers keep and drop on the shared corpus, as a retrieval engineer reads it.

Every figure is taken on the chunks of the default plan (``plans.yaml``: section parents of 1024
tokens, section children of 256), built through chunking's registry, and each check reads the raw
source on its own (pypdfium2 page text, the HTML tree) rather than trusting the parser's output:

- ``pdf_heading_share``: share of PDF chunks (parents and children) with a heading path, over PDFs
  that have an outline.
- ``pdf_running_share``: share of PDF children holding a running header or footer line of a
  page they claim: a top or bottom line found, once digits and roman numerals are masked, at the
  same height on 3 or more pages, in a font no larger than the body text (page numbers included).
- ``pdf_toc_unmarked``: PDF children full of dot leaders or index entries (or, under a
  "Contents" title, numbered entries with bare page numbers) whose content kind is not ``toc``;
  ``pdf_toc_children`` counts them all.
- ``pdf_overclaimed``: PDF children whose provenance lists a page that holds none of their lines.
- ``html_footnotes_missing``: Sphinx footnotes (``aside.footnote``) whose text is in no chunk.
- ``html_chrome_chunks``: HTML chunks that are only chrome (Sphinx footer, DocBook navheader,
  navfooter, ``div.toc``).
- ``html_admonition_tables``: HTML table chunks that are a DocBook admonition ("Note", "Tip", ...).
- ``md_dirty_headings``: Markdown heading path entries that keep image or reference-link markup;
  ``md_raw_html_headings``: ``<hN>`` headings at the top level that open no section.

Run ``python -m tests.parsers.corpus_measure`` from the project root for the figures.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from selectolax.lexbor import LexborHTMLParser

from chunking.chunk import Chunk, PageProvenance
from chunking.chunkers.leveling import ParentChildChunker
from chunking.errors import ParseError
from chunking.parsers import parse_file
from chunking.plans import read_plans_file

__all__ = ["Figures", "default_leveler", "measure"]

ROOT = Path(__file__).resolve().parents[2]
_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"(?<![A-Za-z])[ivxlcdm]+(?![A-Za-z])")
_DOT_LEADER = re.compile(r"(?:\.\s?){4,}\s*[\divxlcdm]+\s*$")
_INDEX_ENTRY = re.compile(r"^[^\d.]{2,60}(?:,\s*\d{1,4}(?:[–-]\d{1,4})?)+\s*$")
_BARE_ENTRY = re.compile(r"^\d+(?:\.\d+)*\s+[A-Za-z].{0,100}\s\d{1,4}$")
_ADMONITION = re.compile(r"^[\s|]*(?:Note|Tip|Warning|Caution|Important)\s*(?:\||\n|$)")
_CHROME = "div.footer, div.navheader, div.navfooter, div.toc"


@dataclass
class Figures:
    """The corpus figures (see the module docstring); ``notes`` holds a few examples of each."""

    pdf_chunks_outlined: int = 0
    pdf_chunks_with_heading: int = 0
    pdf_children: int = 0
    pdf_children_running: int = 0
    pdf_toc_children: int = 0
    pdf_toc_unmarked: int = 0
    pdf_overclaimed: int = 0
    html_footnotes: int = 0
    html_footnotes_missing: int = 0
    html_footnote_pages: list[str] = field(default_factory=list)
    html_chrome_chunks: int = 0
    html_admonition_tables: int = 0
    md_dirty_headings: int = 0
    md_raw_html_headings: int = 0
    notes: dict[str, list[str]] = field(default_factory=dict)

    @property
    def pdf_heading_share(self) -> float:
        return self.pdf_chunks_with_heading / max(self.pdf_chunks_outlined, 1)

    @property
    def pdf_running_share(self) -> float:
        return self.pdf_children_running / max(self.pdf_children, 1)

    def note(self, key: str, text: str) -> None:
        examples = self.notes.setdefault(key, [])
        if len(examples) < 5:
            examples.append(" ".join(text.split())[:160])

    def summary(self) -> dict[str, object]:
        data = {k: v for k, v in asdict(self).items() if k != "notes"}
        data["pdf_heading_share"] = round(self.pdf_heading_share, 4)
        data["pdf_running_share"] = round(self.pdf_running_share, 4)
        return data


def default_leveler(plans_path: Path = ROOT / "plans.yaml") -> ParentChildChunker:
    """The default plan's ``"*"`` route as a parent-child chunker, read by the plans reader."""
    return read_plans_file(plans_path).plans["default"].routes["*"].leveler()


def _mask(line: str) -> str:
    return _ROMAN.sub("#", _DIGITS.sub("#", " ".join(line.split())))


def _pdf_pages(path: Path) -> tuple[list[list[tuple[str, float, float]]], int]:
    """Each page's non-empty lines as ``(text, font size, top)`` (0.0 where PDFium gives none)."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        pages = []
        for page in pdf:
            textpage = page.get_textpage()
            raw = textpage.get_text_range()
            exact = len(raw) == textpage.count_chars()
            lines, position = [], 0
            for segment in raw.split("\n"):
                start, position = position, position + len(segment) + 1
                text = " ".join(segment.replace("\ufffe", "").split())
                if not text:
                    continue
                size = top = 0.0
                if exact:
                    ink = [start + i for i, ch in enumerate(segment) if not ch.isspace()]
                    size = pdfium_c.FPDFText_GetFontSize(textpage.raw, ink[len(ink) // 2])
                    top = textpage.get_charbox(ink[0])[3]
                lines.append((text, size, top))
            textpage.close()
            pages.append(lines)
        return pages, len(list(pdf.get_toc()))
    finally:
        pdf.close()


def _running_lines(pages: list[list[tuple[str, float, float]]]) -> list[set[str]]:
    """Per page, its running lines: a top or bottom line whose masked text is at the same height
    on 3 or more pages, set no larger than the body text (a chapter heading is not one)."""
    sizes = Counter(round(size, 1) for lines in pages for _, size, _ in lines)
    body = sizes.most_common(1)[0][0] if sizes else 0.0

    def edges(lines: list[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
        return [*lines[:2], *lines[-2:]] if len(lines) > 4 else list(lines)

    seen: Counter[tuple[str, int]] = Counter()
    for lines in pages:
        seen.update({(_mask(text), round(top / 4)) for text, _, top in edges(lines)})
    return [
        {
            text
            for text, size, top in edges(lines)
            if seen[(_mask(text), round(top / 4))] >= 3 and (not body or size <= body * 1.2)
        }
        for lines in pages
    ]


def _is_toc(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    hits = sum(1 for line in lines if _DOT_LEADER.search(line) or _INDEX_ENTRY.match(line))
    titles = [i for i, line in enumerate(lines) if line.strip().lower() in ("contents", "table of contents")]
    if titles:
        # A contents page without leaders: "1 Introduction 1" under its title.
        hits += sum(1 for line in lines[titles[0] + 1 :] if _BARE_ENTRY.match(line.strip()))
    return hits >= 3 and hits >= len(lines) // 3


def _measure_pdf(path: Path, leveler: ParentChildChunker, figures: Figures) -> None:
    pages, outline = _pdf_pages(path)
    document = parse_file(path)
    chunks = leveler.chunk(document)
    if outline:
        figures.pdf_chunks_outlined += len(chunks)
        figures.pdf_chunks_with_heading += sum(1 for c in chunks if c.heading_path)
    running = _running_lines(pages)
    page_lines = [{text for text, _, _ in lines} for lines in pages]
    for child in (c for c in chunks if c.level == 0):
        figures.pdf_children += 1
        lines = [" ".join(line.split()) for line in child.text.split("\n") if line.strip()]
        assert isinstance(child.provenance, PageProvenance)
        claimed = child.provenance.pages
        leaked = [line for line in lines for p in claimed if line in running[p - 1]]
        if leaked:
            figures.pdf_children_running += 1
            figures.note("pdf_running", f"{path.name} p{claimed}: {leaked[0]!r} in {child.text[:80]}")
        if _is_toc(child.text):
            figures.pdf_toc_children += 1
            if child.content_kind != "toc":
                figures.pdf_toc_unmarked += 1
                figures.note("pdf_toc_unmarked", f"{path.name}: {child.text[:120]}")
        long_lines = [line for line in lines if len(line) >= 20]
        if long_lines and any(
            not any(line in page_lines[p - 1] or any(line in x for x in page_lines[p - 1]) for line in lines)
            for p in claimed
        ):
            figures.pdf_overclaimed += 1
            figures.note("pdf_overclaimed", f"{path.name} {claimed}: {child.text[:80]}")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _bare(text: str) -> str:
    # Without any whitespace: the tree's text and the parser's differ in spaces around inline tags.
    return "".join(text.split())


def _measure_html(path: Path, leveler: ParentChildChunker, figures: Figures) -> None:
    html = path.read_bytes().decode("utf-8", "replace")
    tree = LexborHTMLParser(html)
    document = parse_file(path)
    chunks = leveler.chunk(document)
    children = [c for c in chunks if c.level == 0]
    body = _bare(" ".join(c.text for c in children))
    notes = tree.css("aside.footnote")
    missing = figures.html_footnotes_missing
    for note in notes:
        label = note.css_first("span.label")
        text = _bare(note.text())
        if label is not None:
            text = text.replace(_bare(label.text()), "", 1)
        probe = text[:60]
        figures.html_footnotes += 1
        if probe not in body:
            figures.html_footnotes_missing += 1
            figures.note("html_footnotes_missing", f"{path.name}: {probe}")
    if notes and figures.html_footnotes_missing == missing:
        figures.html_footnote_pages.append(path.name)
    chrome = [_bare(node.text()) for node in tree.css(_CHROME)]
    chrome = [c for c in chrome if c]
    content_tree = LexborHTMLParser(html)
    for node in content_tree.css(_CHROME):
        node.decompose()
    content = _bare(content_tree.body.text() if content_tree.body else "")
    for chunk in chunks:
        if chunk.content_kind == "table_row" and _ADMONITION.match(chunk.text):
            figures.html_admonition_tables += 1
        bare = _bare(chunk.text)
        if bare not in content and any(bare in c or (len(c) > 30 and c in bare) for c in chrome):
            figures.html_chrome_chunks += 1
            figures.note("html_chrome", f"{path.name} L{chunk.level}: {_flat(chunk.text)[:100]}")


_MARKUP = re.compile(r"!\[|\]\[|\]\(|<img|<a\b|\[!\[")
_RAW_HEADING = re.compile(r"^<h([1-6])\b", re.MULTILINE)


def _measure_markdown(path: Path, figures: Figures) -> None:
    document = parse_file(path)
    for heading in {h for s in document.sections for h in s.heading_path}:
        if _MARKUP.search(heading):
            figures.md_dirty_headings += 1
            figures.note("md_dirty_headings", f"{path.name}: {heading}")
    units = [u for s in document.sections for u in s.units]
    raw = [u for u in units if _RAW_HEADING.match(u.text)]
    figures.md_raw_html_headings += sum(1 for u in raw if u.content_kind != "heading")


def measure(corpus: Path, leveler: ParentChildChunker | None = None) -> Figures:
    """Measure the corpus at ``corpus`` with the default plan (or ``leveler``)."""
    leveler = leveler or default_leveler()
    figures = Figures()
    for path in sorted((corpus / "pdf").glob("*.pdf")):
        try:
            _measure_pdf(path, leveler, figures)
        except ParseError:
            continue
    for path in sorted((corpus / "html").glob("*.html")):
        _measure_html(path, leveler, figures)
    for path in sorted((corpus / "markdown").glob("*.md")):
        _measure_markdown(path, figures)
    return figures


def _chunk_texts(chunks: list[Chunk]) -> list[str]:  # pragma: no cover - for reading by hand
    return [f"[{c.level} {c.content_kind} {c.heading_path} {c.provenance}]\n{c.text}" for c in chunks]


if __name__ == "__main__":
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus"
    result = measure(corpus)
    print(json.dumps(result.summary(), indent=1))
    print(json.dumps(result.notes, indent=1, ensure_ascii=False))
