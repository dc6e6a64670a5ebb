"""Building a document text from units: the layout every offset-bearing parser shares.

``Document.text`` is the units' texts in reading order joined by exactly one blank line
(``"\\n\\n"``). The section chunker joins consecutive units the same way, so any run of units it
packs is an exact slice of the document text.
"""

from __future__ import annotations

from collections.abc import Sequence

from chunking.document import Section, Span, Unit

__all__ = ["SEPARATOR", "LayoutBuilder", "table_text"]

SEPARATOR = "\n\n"


def table_text(rows: Sequence[str]) -> tuple[str, tuple[Span, ...]]:
    """Join rendered table rows with ``"\\n"`` and return the text with each row's span in it.

    Rows must not contain ``"\\n"`` themselves (callers flatten embedded newlines first).
    """
    spans: list[Span] = []
    offset = 0
    for row in rows:
        spans.append(Span(start=offset, end=offset + len(row)))
        offset += len(row) + 1
    return "\n".join(rows), tuple(spans)


class LayoutBuilder:
    """Collects units into sections and lays them out into one text with exact offsets.

    Use :meth:`start_section` when a heading opens a new section (the heading unit is then
    added as the first unit of that section), :meth:`add` for every unit, :meth:`build` at the end.
    Empty units are skipped, so callers need not filter them.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._offset = 0
        self._sections: list[Section] = []
        self._path: tuple[str, ...] = ()
        self._units: list[Unit] = []

    @property
    def unit_count(self) -> int:
        """Units added so far."""
        return sum(len(s.units) for s in self._sections) + len(self._units)

    def start_section(self, heading_path: tuple[str, ...]) -> None:
        """Close the current section and open one under ``heading_path``."""
        self._close()
        self._path = heading_path

    def add(
        self,
        text: str,
        content_kind: str = "text",
        *,
        rows: tuple[Span, ...] = (),
        header_rows: int = 0,
    ) -> None:
        """Append a unit whose text is ``text`` (skipped when it is only whitespace)."""
        if not text.strip():
            return
        if self._parts:
            self._parts.append(SEPARATOR)
            self._offset += len(SEPARATOR)
        start = self._offset
        self._parts.append(text)
        self._offset += len(text)
        self._units.append(
            Unit(
                text=text,
                content_kind=content_kind,
                start=start,
                end=self._offset,
                rows=rows,
                header_rows=header_rows,
            )
        )

    def build(self) -> tuple[str, tuple[Section, ...]]:
        """Return the document text and the sections (sections without units are dropped)."""
        self._close()
        return "".join(self._parts), tuple(self._sections)

    def _close(self) -> None:
        if self._units:
            self._sections.append(Section(heading_path=self._path, units=tuple(self._units)))
        self._units = []
