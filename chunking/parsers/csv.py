"""CSV (and TSV): one table unit whose rows are the records, header first.

Each record is rendered on one line: the source line itself when the record took exactly one
line (quotes and all), otherwise its cells joined by ``", "`` with embedded newlines turned
into spaces, so a row's span never crosses a line. A record's trailing empty cells are left out
(``a,1.22,,`` is ``a,1.22``): they say nothing, and a chunk would end on their delimiters. Blank
lines are skipped. The header is the single header row the section chunker repeats in each row
group.
"""

from __future__ import annotations

import csv
import io
import re
import sys

from chunking.document import Document
from chunking.errors import ParseError
from chunking.parsers.base import build_document, title_from_uri
from chunking.parsers.encoding import decode, normalize_newlines
from chunking.parsers.layout import LayoutBuilder, table_text
from chunking.parsers.limits import ParseLimits, check_limit

__all__ = ["PARSER_VERSION", "parse"]

# 3: short cp1252 text with curly quotes is read as cp1252 (encoding.py); 4: rows leave out
# their trailing empty cells
PARSER_VERSION = "5"
LIBRARY = f"python csv (stdlib, {sys.version.split()[0]})"
_DELIMITERS = ",;\t|"
_SNIFF = 64 * 1024


def _dialect(sample: str, source_uri: str) -> type[csv.Dialect] | csv.Dialect:
    if source_uri.lower().endswith(".tsv"):
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:
        return csv.excel  # The sniffer gives up on one-column files; commas are the norm.


def _without_empty_tail(line: str, record: list[str], delimiter: str) -> str:
    """``line`` (one record's source line) without the record's trailing empty cells: each is a
    delimiter and blanks or a quoted blank (``""``); a tail of another shape is kept."""
    empty = 0
    while empty < len(record) and not record[len(record) - 1 - empty].strip():
        empty += 1
    cell = re.compile(rf'{re.escape(delimiter)}\s*(?:"\s*")?\s*$')
    for _ in range(empty):
        match = cell.search(line)
        if match is None:
            break
        line = line[: match.start()]
    return line.rstrip()


def _quote_left_open(record: str, dialect: type[csv.Dialect] | csv.Dialect) -> bool:
    """Whether the file's last record (from its first line to the end) ends inside a quoted
    field: the lenient reader takes the rest of the file into that field without a word."""
    try:
        for _ in csv.reader(io.StringIO(record, newline=""), dialect, strict=True):
            pass
    except csv.Error as error:
        return "unexpected end of data" in str(error)
    return False


def parse(data: bytes, source_uri: str, limits: ParseLimits) -> Document:
    """Parse CSV bytes into a one-section document holding one table unit.

    Raises:
        ParseError: Undecodable bytes, malformed CSV (a quote never closed included), a field
            over the stdlib's field size limit, more than ``limits.max_rows`` rows, or no rows
            at all.
    """
    decoded, encoding, confidence = decode(data, source_uri)
    text = normalize_newlines(decoded).lstrip("\ufeff")
    lines = text.split("\n")
    # The sniffer's regexes are slow on huge lines: a bounded sample is plenty to pick a dialect.
    dialect = _dialect("\n".join(lines[:50])[:_SNIFF], source_uri)
    reader = csv.reader(io.StringIO(text, newline=""), dialect)
    delimiter = getattr(dialect, "delimiter", ",")
    rows: list[str] = []
    consumed = 0
    try:
        for record in reader:
            first, consumed = consumed, reader.line_num
            if not any(cell.strip() for cell in record):
                continue
            if consumed - first == 1:
                rows.append(_without_empty_tail(lines[first].rstrip(), record, delimiter))
            else:
                while not record[-1].strip():
                    record.pop()
                rows.append(", ".join(" ".join(cell.split()) for cell in record))
            check_limit(source_uri, "max_rows", len(rows) - 1, limits, "data rows")
    except csv.Error as exc:
        raise ParseError(
            source_uri,
            f"malformed CSV near line {reader.line_num}: {exc}",
            "check the quoting, or split a huge single-field file",
        ) from exc
    if consumed - first > 1 and _quote_left_open("\n".join(lines[first:]), dialect):
        raise ParseError(
            source_uri,
            f"a quoted field opened on line {first + 1} is never closed, so every line after it "
            "would be one cell",
            'close the quote on that line; a quote inside a quoted field is written twice, ""',
        )

    builder = LayoutBuilder()
    table, spans = table_text(rows)
    builder.add(table, "table", rows=spans, header_rows=1 if len(rows) > 1 else 0)
    body, sections = builder.build()
    return build_document(
        raw=data,
        kind="csv",
        parser_version=PARSER_VERSION,
        source_uri=source_uri,
        text=body,
        sections=sections,
        title=title_from_uri(source_uri),
        metadata={
            "encoding": encoding,
            "encoding_confidence": confidence,
            "parser": LIBRARY,
            "row_count": max(len(rows) - 1, 0),
            "delimiter": delimiter,
        },
    )
