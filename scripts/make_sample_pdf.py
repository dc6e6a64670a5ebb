"""Write data/sample/orchard-report.pdf, a small three-page PDF, byte for byte reproducibly.

Run from the project root: ``python scripts/make_sample_pdf.py``. Needs fpdf2 (a test extra, not a
runtime dependency). The creation date is fixed so the same fpdf2 version writes the same bytes.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

OUTPUT = Path(__file__).resolve().parent.parent / "data" / "sample" / "orchard-report.pdf"
FIXED_DATE = datetime(2024, 1, 1, tzinfo=UTC)

PAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Orchard report: the autumn harvest",
        (
            "This report sums up the harvest of the community orchard over ten weeks of autumn. "
            "Thirty pickings were weighed and logged by volunteers.",
            "Apples and pears made up most of the crop. A late frost in spring thinned the plum "
            "blossom, and the plum crop was light.",
        ),
    ),
    (
        "Yield by variety",
        (
            "The table below gives the total weight picked for each variety, in kilograms.",
            "TABLE",
            "Quince and medlar trees are young and not yet in full bearing.",
        ),
    ),
    (
        "Next year",
        (
            "We will net the cherry trees before the fruit colours, since birds took a third of "
            "the crop this year.",
            "Volunteers are welcome on Saturday mornings from April onwards.",
        ),
    ),
)
TABLE = (("Variety", "Pickings", "Total kg"), ("apple", "5", "163.2"), ("pear", "5", "171.9"))


def build() -> bytes:
    """Return the PDF's bytes."""
    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title("Orchard report")
    pdf.set_author("Sample corpus")
    for heading, paragraphs in PAGES:
        pdf.add_page()
        pdf.set_font("Helvetica", style="B", size=16)
        pdf.multi_cell(0, 10, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
        pdf.set_font("Helvetica", size=11)
        for paragraph in paragraphs:
            if paragraph == "TABLE":
                with pdf.table(col_widths=(60, 40, 40)) as table:
                    for row in TABLE:
                        cells = table.row()
                        for cell in row:
                            cells.cell(cell)
            else:
                pdf.multi_cell(0, 6, paragraph, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(5)
    return bytes(pdf.output())


def main() -> int:
    """Write the sample PDF and print its path."""
    OUTPUT.write_bytes(build())
    print(OUTPUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
