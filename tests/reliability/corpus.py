"""The bad-input corpus, generated in the tests (nothing binary is checked in).

Each :class:`Case` is one file plus what must happen to it: ``"ingest"`` (a valid document whose
chunks pass the invariants), ``"fail"`` (a row in ``ingest_failures`` whose message names the file
and contains ``words``), or ``"either"`` (PDFium repairs some damage; then it must be ingested
correctly, otherwise recorded). Big cases (50 MB single line, 200k-row CSV) are separate so the
default suite stays fast.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BIG_CASES", "FAST_CASES", "HOSTILE_NAMES", "Case", "good_pdf", "write_cases"]

SECRET = "TOKEN-OUTSIDE-THE-INBOX-7f3a"  # written only outside the inbox; must never be stored


@dataclass(frozen=True)
class Case:
    name: str
    expect: str  # "ingest", "fail" or "either"
    make: Callable[[], bytes]
    words: tuple[str, ...] = ()  # failure message must contain each (case-insensitive)


def good_pdf(pages: int = 2, link: str | None = None) -> bytes:
    """A real PDF with a text layer made by fpdf2 (optionally with a URI link annotation)."""
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    below = {"new_x": XPos.LMARGIN, "new_y": YPos.NEXT}  # each cell on a line of its own
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for page in range(pages):
        pdf.add_page()
        for line in range(12):
            pdf.cell(0, 8, f"Page {page + 1} line {line + 1}: the orchard report continues here.", **below)
        if link:
            pdf.cell(0, 8, "Read more online", link=link, **below)
    return bytes(pdf.output())


def _encrypted_pdf() -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(good_pdf())))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _corrupt_pdf() -> bytes:
    data = bytearray(good_pdf(3))
    rng = random.Random(5)
    start = len(data) // 4  # keep the header; trash the middle (page objects, streams)
    for i in range(start, start + len(data) // 2):
        data[i] = rng.randrange(256)
    return bytes(data)


def _no_xref_pdf() -> bytes:
    data = good_pdf()
    return data[: data.rindex(b"xref")]  # cut before the cross-reference table


def _binary() -> bytes:
    return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(random.Random(1).randbytes(4096))


def _elf() -> bytes:
    return b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8


def _nested_html(depth: int = 10_000) -> bytes:
    scripts = "<script>document.write('<p>injected</p>'); fetch('http://127.0.0.1:9/x')</script>" * 20
    body = "<div>" * depth + "<p>deep paragraph text</p>" + "</div>" * depth
    return f"<html><head>{scripts}</head><body><h1>Nested</h1>{body}{scripts}</body></html>".encode()


def _deep_json(depth: int = 100_000) -> bytes:
    return ("[" * depth + "]" * depth).encode()


def _chat_big_turn() -> bytes:
    words = ("lorem ipsum dolor sit amet consectetur. " * 30_000)[: 1 << 20]
    turns = [{"speaker": "alice", "text": "hello"}, {"speaker": "bob", "text": words}]
    return json.dumps({"title": "one huge turn", "turns": turns}).encode()


CLEAN_TEXT = (
    "# Heading\n\nA short paragraph about apples and pears.\n\n"
    '## Second\n\nAnother paragraph, with SQL: \'); DROP TABLE chunks; -- and "quotes".\n'
)

FAST_CASES: tuple[Case, ...] = (
    Case("empty.md", "fail", lambda: b"", ("empty",)),
    Case("empty.pdf", "fail", lambda: b"", ("empty",)),
    Case("blank.txt", "fail", lambda: b"  \n\n\t \n", ("no text",)),
    Case("corrupt.pdf", "either", _corrupt_pdf, ("pdf",)),
    Case("truncated.pdf", "either", lambda: good_pdf(3)[:900], ("pdf",)),
    Case("no-xref.pdf", "either", _no_xref_pdf, ("pdf",)),
    Case("garbage.pdf", "fail", lambda: b"%PDF-1.7\n" + b"garbage " * 100, ("corrupt",)),
    Case("encrypted.pdf", "fail", _encrypted_pdf, ("encrypted", "decrypt")),
    Case("image.txt", "fail", _binary, ("not a text file",)),
    Case("image.md", "fail", _binary, ("not a text file",)),
    Case("program.csv", "fail", _elf, ("not a text file",)),
    Case("image.html", "fail", _binary, ("not a text file",)),
    Case("utf16.md", "ingest", lambda: CLEAN_TEXT.encode("utf-16")),
    Case("utf16-nobom.txt", "either", lambda: CLEAN_TEXT.encode("utf-16-le"), ("text",)),
    Case("cp1252.txt", "ingest", lambda: ("Café crème, naïve façade — “quoted”. " * 20).encode("cp1252")),
    Case("latin1.csv", "ingest", lambda: "name,city\nJosé,Málaga\nZoë,Köln\n".encode("latin-1")),
    Case(
        "shift-jis.txt",
        "ingest",
        lambda: ("日本語のテキストです。これはテストです。" * 10).encode("shift_jis"),
    ),
    Case("malformed-chat.json", "fail", lambda: b'{"turns": [{"speaker": "a", "text": "hi"', ("json",)),
    Case("no-turns.json", "either", lambda: b'{"title": "x", "items": [1, 2]}', ()),
    Case("deep.json", "fail", _deep_json, ("nested",)),
    Case("nested.html", "ingest", _nested_html),
    Case("big-turn-chat.json", "ingest", _chat_big_turn),
    Case("good.md", "ingest", lambda: CLEAN_TEXT.encode()),
    Case("good.pdf", "ingest", good_pdf),
)

# Names with spaces, quotes, semicolons, a newline, non-ASCII and SQL; each holds good Markdown.
HOSTILE_NAMES: tuple[str, ...] = (
    "with spaces in name.md",
    'quote\'s "double".md',
    "semi;colon;.md",
    "new\nline.md",
    "ünïcødé ☃ 文档 🍐.md",
    "x'; DROP TABLE chunks; --.md",
    "tab\tand $(touch pwned) `id`.md",
)


def _big_line() -> bytes:
    words = b"streaming words without any newline at all "  # 43 bytes
    return (words * (50 * 1024 * 1024 // len(words) + 1))[: 50 * 1024 * 1024]


def _big_csv(rows: int = 200_000) -> bytes:
    lines = ["id,name,quantity,note"] + [f"{i},item {i},{i % 97},row number {i}" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


BIG_CASES: tuple[Case, ...] = (
    Case("single-line-50mb.txt", "ingest", _big_line),
    Case("rows-200k.csv", "ingest", _big_csv),
)


def write_cases(folder: Path, cases: tuple[Case, ...]) -> dict[str, Case]:
    """Write each case into ``folder``; returns them by file name."""
    folder.mkdir(parents=True, exist_ok=True)
    for case in cases:
        (folder / case.name).write_bytes(case.make())
    return {case.name: case for case in cases}
