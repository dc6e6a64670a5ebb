"""Parse throughput per format on the shared corpus, beside the libraries we did not choose.

Run from the project root: ``python benchmarks/bench_parse.py [--corpus ../shared/corpus]
[--repeat 3]``. For each format it prints MB/s of ``chunking.parsers.parse_file`` (the whole
parse: decode, library, layout, Document validation) and of the bare library calls considered
for that format: markdown-it-py vs mistune (block parse), selectolax/lexbor vs lxml (parse +
visible text), pypdfium2 vs pypdf (text of every page). Alternatives that are not installed are
reported as skipped. The best of ``--repeat`` runs is kept. Figures go into docs/parsers.md.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunking.errors import ParseError  # noqa: E402
from chunking.parsers import parse_file  # noqa: E402


def _markdown_it(data: bytes) -> object:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").disable("inline").parse(data.decode("utf-8-sig"))


def _markdown_it_full(data: bytes) -> object:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").parse(data.decode("utf-8-sig"))


def _mistune(data: bytes) -> object:
    import mistune

    return mistune.create_markdown(renderer=None, plugins=["table"])(data.decode("utf-8-sig"))


def _selectolax(data: bytes) -> object:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(data.decode("utf-8", "replace"))
    for node in tree.css("script, style, nav"):
        node.decompose()
    return tree.body.text(separator="\n") if tree.body else ""


def _lxml(data: bytes) -> object:
    import lxml.html

    tree = lxml.html.fromstring(data)
    for node in tree.xpath("//script|//style|//nav"):
        node.drop_tree()
    return tree.text_content()


def _pypdfium2(data: bytes) -> object:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def _pypdf(data: bytes) -> object:
    import io
    import logging

    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    return [page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages]


ALTERNATIVES: dict[str, dict[str, Callable[[bytes], object]]] = {
    "markdown": {
        "markdown-it-py (block only, chosen)": _markdown_it,
        "markdown-it-py (block+inline)": _markdown_it_full,
        "mistune 3 (AST)": _mistune,
    },
    "html": {"selectolax lexbor (chosen)": _selectolax, "lxml.html": _lxml},
    "pdf": {"pypdfium2 (chosen)": _pypdfium2, "pypdf": _pypdf},
}


def _row(kind: str, name: str, files: int, megabytes: float, seconds: float) -> None:
    print(f"{kind:9} {name:38} {files:5} {megabytes:7.2f} {seconds:8.3f} {megabytes / seconds:7.1f}")


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def _files(corpus: Path) -> dict[str, list[Path]]:
    by_kind: dict[str, list[Path]] = {}
    for path in sorted(corpus.iterdir()):
        if path.is_dir():
            by_kind[path.name] = sorted(p for p in path.iterdir() if p.is_file())
    return by_kind


def main(argv: list[str] | None = None) -> int:
    """Print a throughput table; return 0, or 2 when the corpus is missing."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    print(f"{'format':9} {'implementation':38} {'files':>5} {'MB':>7} {'seconds':>8} {'MB/s':>7}")
    for kind, paths in _files(args.corpus).items():
        blobs = [p.read_bytes() for p in paths]
        megabytes = sum(map(len, blobs)) / 1e6

        def whole(paths: list[Path] = paths) -> None:
            for path in paths:
                with contextlib.suppress(ParseError):
                    parse_file(path)

        seconds = _best(whole, args.repeat)
        label = "chunking.parsers.parse_file"
        _row(kind, label, len(paths), megabytes, seconds)
        for name, fn in ALTERNATIVES.get(kind, {}).items():
            try:
                seconds = _best(lambda fn=fn, blobs=blobs: [fn(b) for b in blobs], args.repeat)
            except ImportError as exc:
                print(f"{kind:9} {name:38} skipped ({exc.name} not installed)")
                continue
            _row(kind, name, len(paths), megabytes, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
