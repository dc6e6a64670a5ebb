"""Issue 18 on the real corpus: structure kept, chrome dropped, measured on default-plan chunks.

Slow (the whole corpus is parsed and chunked): run with ``pytest -m slow tests/parsers``. The
figures are printed (``-s``) and asserted; ``python -m tests.parsers.corpus_measure`` prints them
with examples.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunking.parsers import parse_file
from chunking.parsers.encoding import decode
from tests.parsers.corpus_measure import Figures, measure
from tests.parsers.encoding_samples import SAMPLES, accuracy

# One worker measures the corpus once for the module (the ``figures`` fixture).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("parsers-corpus-quality")]

# The Sphinx pages whose footnotes (aside.footnote) were dropped as chrome.
FOOTNOTE_PAGES = {
    "python311-library-json.html",
    "python311-library-stdtypes.html",
    "python311-library-datetime.html",
    "python311-library-time.html",
    "python311-library-codecs.html",
    "python311-whatsnew-3.11.html",
    "developers-reference-pkgs.html",
}


@pytest.fixture(scope="module")
def figures(corpus_dir: Path) -> Figures:
    result = measure(corpus_dir)
    print(json.dumps(result.summary(), indent=1))
    return result


def test_corpus_pdf_chunks_carry_heading_paths(figures: Figures) -> None:
    assert figures.pdf_chunks_outlined > 0
    assert figures.pdf_heading_share >= 0.80, figures.notes


def test_corpus_pdf_children_hold_no_running_headers(figures: Figures) -> None:
    assert figures.pdf_children > 0
    assert figures.pdf_running_share <= 0.02, figures.notes.get("pdf_running")


def test_corpus_pdf_contents_and_index_children_are_marked(figures: Figures) -> None:
    assert figures.pdf_toc_children > 0
    assert figures.pdf_toc_unmarked == 0, figures.notes.get("pdf_toc_unmarked")


def test_corpus_pdf_children_claim_only_pages_their_text_is_on(figures: Figures) -> None:
    # Slices of a paragraph joined across a page break claim both pages (docs/parsers.md).
    assert figures.pdf_overclaimed <= figures.pdf_children // 100, figures.notes.get("pdf_overclaimed")


def test_corpus_html_footnotes_are_kept(figures: Figures, corpus_dir: Path) -> None:
    assert figures.html_footnotes_missing == 0, figures.notes.get("html_footnotes_missing")
    assert set(figures.html_footnote_pages) >= FOOTNOTE_PAGES
    document = parse_file(corpus_dir / "html" / "python311-library-json.html")
    assert "As noted in the errata for RFC 7159, JSON permits literal" in document.text


def test_corpus_html_chrome_makes_no_chunks(figures: Figures) -> None:
    assert figures.html_chrome_chunks == 0, figures.notes.get("html_chrome")
    assert figures.html_admonition_tables == 0


def test_corpus_markdown_headings_are_clean(figures: Figures) -> None:
    assert figures.md_dirty_headings == 0, figures.notes.get("md_dirty_headings")
    assert figures.md_raw_html_headings == 0


def test_labelled_encodings_are_all_read_right(corpus_dir: Path) -> None:
    right, wrong = accuracy(lambda data: decode(data, "mem://sample").encoding)
    print(f"encodings: {right}/{len(SAMPLES)}")
    assert wrong == []
    document = parse_file(corpus_dir / "text" / "genesis-french-segond1910.txt")
    assert "Au commencement, Dieu créa les cieux et la terre." in document.text
    assert document.metadata["encoding_confidence"] > 0
