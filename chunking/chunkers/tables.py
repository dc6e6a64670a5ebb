"""Tables in the section chunker: row groups that carry the column names, wide rows as cells.

A table that fits is one chunk. A bigger one becomes row groups, each with the table's header rows:
the first group starts at the header itself; later groups repeat it, and so do groups of a table
clipped to a parent chunk (a child), whose header lies outside the clip
(:attr:`chunking.document.Unit.clipped_from`). A row that does not fit beside the header, and every
row of a table whose header takes over half the budget, is rendered as ``column: value`` lines, one
a cell (empty cells left out, and what follows the last value: ``2010: 1.22``, not ``2010:
1.22,,``), packed at cell boundaries; every piece after a row's first repeats the row's key cell
(its first non-empty cell), so no piece is only a header, no piece is values without names, and no
cell is split unless it alone is over the budget. Cells come from the row's text: CSV rows split at
the document's delimiter outside double quotes, other rows at ``|`` (outer pipes dropped, ``\\|``
kept). The text after a row's last value is covered by the next row's first chunk; only a table's
(or a clip's) last row renders it, since nothing after it in the table can cover it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from chunking.chunkers.drafts import Draft, Piece
from chunking.document import Document, Span, Unit

__all__ = ["TableDrafter", "cell_spans", "column_names", "delimiter_of"]

_DELIMITER_ROW = re.compile(r"^[\s|:+-]*$")
# The least of a value worth a piece beside the headings that lead a row (in tokens).
_LEAST_VALUE = 4


def delimiter_of(document: Document) -> str:
    """The cell delimiter of a document's tables: the CSV dialect's, else ``|``."""
    if document.kind == "csv":
        return str(document.metadata.get("delimiter") or ",")
    return "|"


def cell_spans(row: str, delimiter: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each cell of one row, whitespace trimmed (an empty cell has
    ``start == end``)."""
    raw: list[tuple[int, int]] = []
    start, quoted, index = 0, False, 0
    pipes = delimiter == "|"
    while index < len(row):
        char = row[index]
        if pipes and char == "\\":
            index += 2
            continue
        if not pipes and char == '"':
            quoted = not quoted
        elif char == delimiter and not quoted:
            raw.append((start, index))
            start = index + 1
        index += 1
    raw.append((start, len(row)))
    if pipes:
        if raw and not row[raw[0][0] : raw[0][1]].strip():
            raw = raw[1:]  # before an outer pipe
        if raw and not row[raw[-1][0] : raw[-1][1]].strip() and row.rstrip().endswith("|"):
            raw = raw[:-1]  # after an outer pipe
    spans = []
    for a, b in raw:
        while a < b and row[a].isspace():
            a += 1
        while b > a and row[b - 1].isspace():
            b -= 1
        spans.append((a, b))
    return spans


def column_names(header: str, delimiter: str) -> list[str]:
    """The column names of a table's header rows: the cells of its last row that is not a
    Markdown delimiter row (``|---|:-:|``), quotes taken off."""
    lines = [line for line in header.split("\n") if line.strip() and not _DELIMITER_ROW.match(line)]
    if not lines:
        return []
    line = lines[-1]
    return [line[a:b].strip('"').strip() for a, b in cell_spans(line, delimiter)]


@dataclass
class TableDrafter:
    """Drafts for the tables of one document, for a section chunker's budget.

    ``count_many`` and ``count`` count with the chunker's tokenizer; ``lead_text`` renders a
    draft of headings that must start the table's first chunk; ``split_text`` returns the
    drafts of a text split like prose (with a lead), for a table without a header;
    ``split_value`` cuts one cell's value over the budget into spans that fit it.
    """

    size: int
    document: Document
    count: Callable[[str], int]
    count_many: Callable[[list[str]], list[int]]
    lead_text: Callable[[Draft], str]
    split_text: Callable[[Unit, tuple[str, ...], Draft | None], list[Draft]]
    split_value: Callable[[str, int], list[tuple[int, int]]]

    def __post_init__(self) -> None:
        self.newline = self.count("\n")
        self.blank = self.count("\n\n")
        self.delimiter = delimiter_of(self.document)
        self._names: dict[str, str] = {}

    def drafts(self, unit: Unit, path: tuple[str, ...], tokens: int, lead: Draft | None) -> list[Draft]:
        """The drafts of one table unit, the first led by ``lead`` (headings) when given."""
        lead_cost = lead.tokens + self.blank if lead else 0
        rows = unit.rows
        inside = min(unit.header_rows, len(rows))
        source = unit.clipped_from
        if inside:
            header = unit.text[rows[0].start : rows[inside - 1].end]
        elif source is not None and source.header_rows and source.rows:
            count = min(source.header_rows, len(source.rows))
            header = source.text[source.rows[0].start : source.rows[count - 1].end]
        else:
            header = ""
        repeated = "" if inside else header
        body = rows[inside:]
        whole = Piece(unit.text, unit.start, unit.end, unit.pages, "table_row", path, tokens)
        texts = [header, *(unit.text[r.start : r.end] for r in body)] if header and body else []
        counts = self.count_many(texts) if texts else [0]
        header_tokens = counts[0] + self.newline if repeated else 0
        if tokens + lead_cost + header_tokens <= self.size:
            pieces = [*(lead.pieces if lead else ()), whole]
            exact = not lead and not repeated
            return [Draft(pieces, tokens + lead_cost + header_tokens, header=repeated, exact=exact)]
        if not texts:
            return self.split_text(unit, path, lead)
        return self._rows(unit, path, header, inside, body, texts[1:], counts, lead, lead_cost)

    def _rows(
        self,
        unit: Unit,
        path: tuple[str, ...],
        header: str,
        inside: int,
        body: tuple[Span, ...],
        row_texts: list[str],
        counts: list[int],
        lead: Draft | None,
        lead_cost: int,
    ) -> list[Draft]:
        size = self.size
        base = counts[0] + self.newline
        wide_all = base > size // 2  # a header too big to repeat: every row goes as cells
        rows = unit.rows
        header_piece = None
        if inside:
            header_piece = _span_piece(unit, rows[0].start, rows[inside - 1].end, path, counts[0])
        drafts: list[Draft] = []
        group: list[Piece] = []
        group_tokens = 0
        pending = lead  # the lead goes with the first draft made
        # Where the tail a wide row left unrendered starts (its empty cells' delimiters, an outer
        # pipe): the next row's first chunk starts its span there, so the tail stays covered.
        carry: int | None = None
        # Where a run of empty rows (only delimiters) skipped before this row starts, in the
        # unit's text: the row's piece holds them, so a chunk said to be an exact slice is one.
        empty_from: int | None = None
        last = max((i for i, text in enumerate(row_texts) if text.strip()), default=-1)
        run_first = 0  # the first draft of the current run of row groups (no wide row between)

        def close() -> None:
            nonlocal group, group_tokens, header_piece, pending
            if group:
                pieces = group if header_piece is None else [header_piece, *group]
                draft = Draft(pieces, group_tokens + base, header="" if header_piece else header, exact=False)
                if pending:
                    draft.pieces[:0] = pending.pieces
                    draft.tokens += lead_cost
                    pending = None
                drafts.append(draft)
                header_piece = None
            group, group_tokens = [], 0

        for number, (row, text, row_tokens) in enumerate(zip(body, row_texts, counts[1:], strict=True)):
            if not text.strip():
                continue
            if number != last and all(a == b for a, b in cell_spans(text, self.delimiter)):
                # Only delimiters (an empty row, or in a child the tail of the row before its
                # parent): it goes with the next row's first chunk, never a chunk of "|".
                if carry is None and unit.start is not None:
                    carry, empty_from = unit.start + row.start, row.start
                continue
            span_start = row.start
            if empty_from is not None:
                span_start = empty_from
                row_tokens = self.count(unit.text[span_start : row.end])
            room = size - (lead_cost if pending else 0)
            if wide_all or base + row_tokens > room:
                close()
                self._even_tail(drafts, run_first)
                start, carry, empty_from = carry, None, None
                if header_piece is not None:  # the first chunk's span covers the header it names
                    start, header_piece = header_piece.start, None
                made, carry = self._wide_row(unit, row, path, header, pending, start, number == last)
                drafts.extend(made)
                run_first = len(drafts)
                pending = None
                continue
            cost = row_tokens + (self.newline if group else 0)
            if group and base + group_tokens + cost > room:
                close()
                cost = row_tokens
            piece = _span_piece(unit, span_start, row.end, path, row_tokens)
            if carry is not None and empty_from is None:
                # After a wide row, so this group repeats the header: not exact.
                piece.start = carry
            carry = empty_from = None
            group.append(piece)
            group_tokens += cost
        close()
        self._even_tail(drafts, run_first)
        return drafts

    def _even_tail(self, drafts: list[Draft], first: int) -> None:
        """Even out the last two row groups of a run (``drafts[first:]``, each a header and
        rows) when the last holds under a quarter of the budget: rows move from the end of the
        one before to the start of the last while the last stays the smaller. As many chunks,
        and no chunk of the header and two rows after groups filled to the budget (a parent cut
        into children of a quarter of its size left one at the end of every parent)."""
        if len(drafts) - first < 2 or drafts[-1].tokens * 4 >= self.size:
            return
        previous, tail = drafts[-2], drafts[-1]
        rows = [i for i, piece in enumerate(previous.pieces) if piece.kind == "table_row"]
        if not previous.header:  # the first group holds the table's own header rows
            rows = rows[1:]
        while len(rows) > 1 and rows[-1] == len(previous.pieces) - 1:
            cost = previous.pieces[-1].tokens + self.newline
            if tail.tokens + cost > previous.tokens - cost:
                break
            tail.pieces.insert(0, previous.pieces.pop())
            rows.pop()
            previous.tokens -= cost
            tail.tokens += cost

    def _wide_row(
        self,
        unit: Unit,
        row: Span,
        path: tuple[str, ...],
        header: str,
        lead: Draft | None,
        start: int | None,
        last: bool,
    ) -> tuple[list[Draft], int | None]:
        """A row as ``column: value`` lines packed into drafts, each after the first led by the
        row's key cell; ``start`` widens the first draft's span back (to cover the header, or
        the tail of the row before).

        Text after the row's last value (empty cells' delimiters, an outer pipe) is not
        rendered: ``2010: 1.22``, never ``2010: 1.22,,,``. Its offset is returned for the next
        row's first chunk to start at; only the ``last`` row of a unit renders it, since a
        chunk ends with the document's text at the end of its span and nothing follows there.
        """
        names = [self._fit_name(name) for name in column_names(header, self.delimiter)]
        full, full_start, (clip_a, clip_b) = self._full_row(unit, row)
        filled = [(i, a, b) for i, (a, b) in enumerate(cell_spans(full, self.delimiter)) if a < b]
        if not filled:
            filled = [(0, 0, len(full))]
        kept = [(i, max(a, clip_a), min(b, clip_b)) for i, a, b in filled if b > clip_a and a < clip_b]
        if not kept:  # only delimiters (a clip between cells): the text as it stands
            first = row.start if start is None or unit.start is None else start - unit.start
            tokens = self.count(unit.text[first : row.end])
            piece = _span_piece(unit, first, row.end, path, tokens)
            if lead is None:
                return [Draft([piece], tokens)], None
            return [Draft([*lead.pieces, piece], tokens + lead.tokens + self.blank, exact=False)], None
        values = self.count_many([f"{_name(names, i)}: {full[a:b]}" for i, a, b in kept])
        drafts: list[Draft] = []
        # Headings go on with the row's first piece, its first value cut finer if need be (a
        # chunk of headings alone finds nothing), unless not even a bit of a value fits beside.
        first_name = self.count(f"{_name(names, kept[0][0])}: ")
        if lead is not None and lead.tokens + self.blank + first_name + _LEAST_VALUE > self.size:
            drafts.append(lead)
            lead = None
        key_index, key_a, key_b = filled[0]
        key_line = f"{_name(names, key_index)}: {full[key_a:key_b]}"
        key_cost = self.count(key_line) + self.newline
        if key_cost > self.size // 4:  # a key too long to repeat: pieces go without it
            key_cost = 0
        lead_cost = (lead.tokens + self.blank) if lead else 0
        # (name, value start, value end) in ``full``; a value too big for a piece is cut (the
        # first piece, which the headings lead, cuts its first value finer when packed).
        cells: list[tuple[str, int, int]] = []
        for (i, a, b), tokens in zip(kept, values, strict=True):
            name = _name(names, i)
            room = self.size - (0 if key_a <= a < key_b else key_cost) - 2
            if tokens <= room:
                cells.append((name, a, b))
                continue
            budget = max(room - self.count(f"{name}: "), 4)
            cells.extend((name, a + x, a + y) for x, y in self.split_value(full[a:b], budget))
        tail = len(full[:clip_b].rstrip())
        carry = None
        if full[cells[-1][2] : tail].strip():
            if full_start is not None and not last:
                carry = full_start + cells[-1][2]
            elif full_start is not None:
                name, a, _ = cells[-1]
                cells[-1] = (name, a, tail)
        lines = [f"{name}: {full[a:b]}" for name, a, b in cells]
        counts = self.count_many(lines)
        lead_text = self.lead_text(lead) if lead else ""
        first = len(drafts)
        position = 0
        span_start = None if full_start is None else (start if start is not None else full_start + clip_a)
        while position < len(lines):
            led = lead is not None and len(drafts) == first
            keyed = key_cost > 0 and not key_a <= cells[position][1] < key_b
            prefix = ([lead_text, ""] if led else []) + ([key_line] if keyed else [])
            room = self.size - (lead_cost if led else 0) - (key_cost if keyed else 0)
            taken, total = 0, 0
            while position + taken < len(lines):
                cost = counts[position + taken] + (self.newline if taken else 0)
                if taken and total + cost > room:
                    break
                total, taken = total + cost, taken + 1
            while True:  # the sum of line counts is an estimate: count, and give back a line
                text = "\n".join([*prefix, *lines[position : position + taken]])
                tokens = self.count(text)
                if tokens <= self.size or taken == 1:
                    break
                taken -= 1
            if tokens > self.size:  # one line, over after all: cut its value finer, try again
                name, a, b = cells[position]
                budget = max(counts[position] - self.count(f"{name}: ") - (tokens - self.size) - 1, 1)
                parts = [(name, a + x, a + y) for x, y in self.split_value(full[a:b], budget)]
                if len(parts) > 1:
                    cells[position : position + 1] = parts
                    lines[position : position + 1] = [f"{n}: {full[x:y]}" for n, x, y in parts]
                    counts[position : position + 1] = self.count_many(lines[position : position + len(parts)])
                    continue
            end = None if full_start is None else full_start + cells[position + taken - 1][2]
            piece = Piece(text, span_start, end, unit.pages, "table_row", path, tokens)
            pieces = [*lead.pieces, piece] if led and lead is not None else [piece]
            drafts.append(Draft(pieces, tokens, rendered=text))
            span_start = end
            position += taken
        return drafts, carry

    def _fit_name(self, name: str) -> str:
        """A column name, shortened (with an ellipsis) to an eighth of the budget if longer."""
        cached = self._names.get(name)
        if cached is None:
            cached = name
            if self.count(name) > self.size // 8:
                low, high = 0, len(name)
                while low < high:
                    middle = (low + high + 1) // 2
                    if self.count(name[:middle] + "…") <= self.size // 8:
                        low = middle
                    else:
                        high = middle - 1
                cached = name[:low] + "…"
            self._names[name] = cached
        return cached

    def _full_row(self, unit: Unit, row: Span) -> tuple[str, int | None, tuple[int, int]]:
        """The whole row a (possibly clipped) row belongs to, its document offset, and the clip
        as a span in it."""
        text = unit.text[row.start : row.end]
        source = unit.clipped_from
        if source is None or unit.start is None or source.start is None:
            offset = None if unit.start is None else unit.start + row.start
            return text, offset, (0, len(text))
        relative = unit.start + row.start - source.start
        starts = [r.start for r in source.rows]
        index = max(bisect.bisect_right(starts, relative) - 1, 0)
        whole = source.rows[index]
        full = source.text[whole.start : whole.end]
        shift = relative - whole.start
        return full, source.start + whole.start, (shift, shift + len(text))


def _name(names: list[str], index: int) -> str:
    return names[index] if index < len(names) and names[index] else f"column {index + 1}"


def _span_piece(unit: Unit, start: int, end: int, path: tuple[str, ...], tokens: int) -> Piece:
    offset = unit.start
    return Piece(
        unit.text[start:end],
        None if offset is None else offset + start,
        None if offset is None else offset + end,
        unit.pages,
        "table_row",
        path,
        tokens,
    )
