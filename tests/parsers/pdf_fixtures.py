"""Small PDFs made in code with fpdf2 (a test extra) for the PDF layout tests.

``manual()`` writes a six-page manual: a title page, a contents page of dot leaders, then four
pages of chapters with an outline (bookmarks), a running header (``Orchard Manual - page N``) and
a running footer (the bare page number), a paragraph that runs on from page 4 to page 5, and a
footnote set small at the foot of page 3. Every text is ASCII (fpdf2's core fonts).
"""

from __future__ import annotations

from datetime import UTC, datetime

from fpdf import FPDF

__all__ = ["CONTINUED", "FOOTNOTE", "HEADER", "manual"]

HEADER = "Orchard Manual - page"
FOOTNOTE = "1 The pruning calendar is kept by the volunteers in the shed logbook."
CONTINUED = (
    "Pears are picked before they are ripe and left to ripen indoors on slatted trays, "
    "turned every few days, checked for bruises and brought to the kitchen once they give "
    "a little under the thumb near the stalk. "
)
_FILLER = (
    "Apples keep best in a cool dark store where the air moves a little and the temperature "
    "stays steady through the winter months. "
)


class _Manual(FPDF):
    def header(self) -> None:
        if self.page_no() > 2:
            self.set_font("Helvetica", size=9)
            self.cell(0, 8, f"{HEADER} {self.page_no()}", new_x="LMARGIN", new_y="NEXT")
            self.ln(4)

    def footer(self) -> None:
        if self.page_no() > 2:
            self.set_y(-12)
            self.set_font("Helvetica", size=9)
            self.cell(0, 8, str(self.page_no()), align="C")


def _body(pdf: FPDF, text: str) -> None:
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)


def _heading(pdf: FPDF, title: str, level: int) -> None:
    pdf.start_section(title, level=level)
    pdf.set_font("Helvetica", style="B", size=16 - 2 * level)
    pdf.multi_cell(0, 9, title, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)


def manual(*, outline: bool = True, leaders: bool = True) -> bytes:
    """Return the manual's bytes (without bookmarks when ``outline`` is False; with a titled
    contents page of bare page numbers, no dot leaders, when ``leaders`` is False)."""
    pdf = _Manual(format="A5")
    pdf.set_creation_date(datetime(2024, 1, 1, tzinfo=UTC))
    pdf.set_title("Orchard Manual")
    pdf.set_auto_page_break(True, margin=18)
    heading = _heading if outline else (lambda p, t, level: _body(p, t))
    pdf.add_page()
    _body(pdf, "Orchard Manual")
    _body(pdf, "A short guide for the volunteers of the community orchard.")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    if not leaders:
        pdf.cell(0, 6, "Contents", new_x="LMARGIN", new_y="NEXT")
    for entry, page in (("1 Pruning", 3), ("1.1 Winter pruning", 3), ("2 Harvest", 4), ("2.1 Storing", 5)):
        dots = " ." * (40 - len(entry) // 2) if leaders else ""
        pdf.cell(0, 6, f"{entry}{dots} {page}", new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    heading(pdf, "1 Pruning", 0)
    _body(pdf, "Fruit trees are pruned to let light into the crown and to keep them a size we can pick.")
    heading(pdf, "1.1 Winter pruning", 1)
    _body(pdf, "Apples and pears are pruned in winter while they are dormant.")
    pdf.set_y(-40)
    pdf.set_font("Helvetica", size=7)
    pdf.multi_cell(0, 4, FOOTNOTE, new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    heading(pdf, "2 Harvest", 0)
    _body(pdf, _FILLER * 9)
    pdf.set_font("Helvetica", size=11)
    # Fill the page to its foot so the next paragraph breaks across the page.
    pdf.multi_cell(0, 6, CONTINUED * 5, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    heading(pdf, "2.1 Storing", 1)
    _body(pdf, "Stored fruit is checked every week. A rotten apple is taken out at once.")
    return bytes(pdf.output())
