"""Deep documents of every format parse in time linear in their size, or fail at once with a
clear message (issue 30: 100,000 nested <div> took 35 s in the HTML tree builder); PDF included."""

from __future__ import annotations

import time

import pytest

from chunking.errors import ParseError
from chunking.parsers import ParseLimits, parse_bytes
from chunking.parsers.html import flatten_deep

N = 100_000


def _timed(kind: str, data: bytes, **kwargs):
    start = time.perf_counter()
    try:
        return parse_bytes(
            data, kind=kind, source_uri=f"mem://deep.{kind}", **kwargs
        ), time.perf_counter() - start
    except ParseError as error:
        return error, time.perf_counter() - start


@pytest.mark.parametrize("tag", ["div", "span", "section"])
def test_deeply_nested_html_is_flattened_and_parses_in_linear_time(tag: str) -> None:
    html = f"<html><body>{f'<{tag}>' * N}<p>deep text</p>{f'</{tag}>' * N}<p>after</p></body></html>"
    document, seconds = _timed("html", html.encode())
    assert seconds < 5
    assert document.text == "deep text\n\nafter"
    assert document.metadata["flattened_tags"] == 2 * (N - 1000)


def test_the_depth_kept_is_a_limit_that_can_be_set() -> None:
    html = f"<html><body>{'<div>' * 900}deep text{'</div>' * 900}</body></html>".encode()
    document, _ = _timed("html", html)
    assert "deep text" in document.text and "flattened_tags" not in document.metadata
    document, _ = _timed("html", html, limits=ParseLimits(max_depth=100))
    assert "deep text" in document.text and document.metadata["flattened_tags"] == 1600


def test_flattening_keeps_text_and_ignores_tags_that_do_not_nest() -> None:
    text = (
        "<body>"
        + "<p>text" * 50
        + "<div><br><img src=x><!-- <div><div> --><script>'<div>'</script></div></body>"
    )
    assert flatten_deep(text, 1) == (text, 0)
    flat, dropped = flatten_deep("<div><div><b>x</b></div></div>", 1)
    assert (flat, dropped) == ("<div>x</div>", 4)


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        ("markdown", (">" * N + " x\n").encode()),
        ("markdown", ("[" * N + "x" + "]" * N + "\n").encode()),
        ("markdown", ("# " + "*" * N + "x" + "*" * N + "\n").encode()),
        ("markdown", "".join("  " * i + "- x\n" for i in range(300)).encode()),
        ("text", ("(" * N + "\n" + "\t" * N + "x\n").encode()),
        ("csv", ("a,b\n" + '"' + "x," * N + '",1\n').encode()),
        ("chat", ("[" * N + "]" * N).encode()),
    ],
    ids=["md-quotes", "md-brackets", "md-emphasis-heading", "md-lists", "text", "csv", "chat-json"],
)
def test_deep_documents_of_other_formats_finish_quickly(kind: str, data: bytes) -> None:
    result, seconds = _timed(kind, data)
    assert seconds < 5, f"{kind}: {seconds:.1f} s"
    if isinstance(result, ParseError):
        assert result.reason  # a clear message, never a hang or a RecursionError


def _pdf(content: bytes, page_extra: bytes = b"") -> bytes:
    """A one-page PDF whose page draws ``content``; ``page_extra`` goes into the page dict."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> " + page_extra + b">>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


_TEXT = b"BT /F1 12 Tf 72 700 Td (deep text) Tj ET"


@pytest.mark.parametrize(
    "data",
    [
        _pdf(b"q " * N + _TEXT + b" Q" * N),
        _pdf(b"[" * N + b"]" * N + b" " + _TEXT),
        _pdf(_TEXT, b"/Deep " + b"[" * N + b"]" * N + b" "),
        _pdf(_TEXT, b"/Deep " + b"<< /A " * N + b"1" + b" >>" * N + b" "),
    ],
    ids=["graphics-states", "array-in-content", "array-in-page", "dicts-in-page"],
)
def test_deep_pdfs_finish_quickly(data: bytes) -> None:
    # pdfium bounds its own parser's nesting; this holds that for the PDF format too.
    result, seconds = _timed("pdf", data)
    assert seconds < 5, f"pdf: {seconds:.1f} s"
    if isinstance(result, ParseError):
        assert result.reason
    else:
        assert "deep text" in result.text
