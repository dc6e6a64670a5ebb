"""PDF parser: one section per page, page units without offsets."""

from __future__ import annotations

from pathlib import Path

from chunking.parsers import parse_file


def test_pdf_sample_has_one_section_per_page_with_page_units(sample_dir: Path) -> None:
    document = parse_file(sample_dir / "orchard-report.pdf")
    assert document.kind == "pdf"
    assert document.metadata["page_count"] == 3 == len(document.sections)
    assert document.title == "Orchard report"
    for number, section in enumerate(document.sections, start=1):
        assert section.heading_path == ()
        assert section.units
        for unit in section.units:
            assert unit.page == number and unit.start is None and unit.end is None
    assert document.sections[0].units[0].text == "Orchard report: the autumn harvest"
    assert document.sections[1].units[0].text == "Yield by variety"
    assert "apple 5 163.2" in document.sections[1].units[1].text
    assert document.text.count("\f") == 2


def test_pdf_sample_script_is_reproducible(sample_dir: Path) -> None:
    import importlib.util

    script = sample_dir.parents[1] / "scripts" / "make_sample_pdf.py"
    spec = importlib.util.spec_from_file_location("make_sample_pdf", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == (sample_dir / "orchard-report.pdf").read_bytes()
