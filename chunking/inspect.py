"""Look at the chunks a plan makes of one file: ``python -m chunking.inspect FILE``.

Prints each level (parents, then children) one chunk a line: index, token count, content kind,
section label and the start of the text (``--full`` prints the whole contextual text), then a
histogram of the level's sizes against its budget. The chunkers come from a plans file
(``--plans``, default ``plans.yaml``; ``--plan`` names the plan) through
:mod:`chunking.plans`, so this never needs the pipeline. A CLI hosts it as a subcommand with
:func:`add_arguments` (on its subparser) and :func:`run` (``ingest inspect`` does).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from chunking.chunk import Chunk
from chunking.chunkers.base import BaseChunker
from chunking.errors import IngestError
from chunking.parsers import ParseLimits, parse_file
from chunking.plans import leveler_for, plan_routes

__all__ = ["add_arguments", "budget_of", "histogram", "main", "render_chunk", "run"]

_BARS = 40
# However narrow the line, a section label keeps this many characters before it is cut.
_LABEL_MIN = 40


def budget_of(chunker: BaseChunker) -> int | None:
    """The size budget of a chunker (``chunk_size``), None when it has none."""
    return getattr(chunker, "chunk_size", None)


def _cut(text: str, room: int) -> str:
    """``text``, or its start and ``...`` in ``room`` characters when it is longer."""
    return text if len(text) <= room else text[: room - 3] + "..."


def _cut_label(label: str, room: int) -> str:
    """A section label in ``room`` characters: its innermost headings, which say where the
    chunk is, after ``... >`` for the outer ones left out (the last heading itself cut at its
    end when even it is too long)."""
    if len(label) <= room:
        return label
    *outer, kept = label.split(" > ")
    if not outer:
        return _cut(label, room)
    while outer and len(outer[-1]) + len(kept) + len(" > ... > ") <= room:
        kept = f"{outer.pop()} > {kept}"
    return _cut(f"... > {kept}" if outer else kept, room)


def render_chunk(chunk: Chunk, width: int = 100, *, full: bool = False) -> str:
    """One chunk as a line: index, tokens, kind, speakers or header flag, label, text start.

    The label gets half the room the other facts leave on a ``width`` line (all of it with
    ``full``, where the text follows on its own lines), never under 40 characters; the text
    start fills the rest of the line (at least 20 characters).
    """
    facts = [
        f"#{chunk.index:<4}",
        f"{chunk.metadata.get('token_count', '?'):>5} tok",
        f"{chunk.content_kind:<9}",
    ]
    meta = chunk.metadata
    if "speakers" in meta:
        facts.append(f"turns {meta.get('turn_start')}-{meta.get('turn_end')} {','.join(meta['speakers'])}")
    if meta.get("repeated_header"):
        facts.append("+header")
    if meta.get("rendering") == "columns":
        facts.append("as cells")
    if meta.get("fence_open") or meta.get("fence_close"):
        facts.append("refenced")
    if meta.get("exact_slice") is False:
        facts.append("(not a slice)")
    label = chunk.section_label()
    if label:
        left = width - len("  ".join(facts)) - len("  []")
        facts.append(f"[{_cut_label(label, max(left if full else left // 2, _LABEL_MIN))}]")
    head = "  ".join(facts)
    if full:
        body = "\n".join("    " + line for line in chunk.contextual_text.splitlines())
        return f"{head}\n{body}"
    flat = " ".join(chunk.text.split())
    return f"{head} | {_cut(flat, max(width - len(head) - 3, 20))}"


def histogram(counts: Sequence[int], budget: int | None, buckets: int = 8) -> list[str]:
    """Lines of a text histogram of token counts in ``buckets`` equal ranges up to the budget."""
    if not counts:
        return ["  (no chunks)"]
    top = max(budget or 0, max(counts))
    step = max(1, -(-(top + 1) // buckets))  # buckets cover 0..top, the budget included
    tallies = [0] * buckets
    for count in counts:
        tallies[min(count // step, buckets - 1)] += 1
    widest = max(tallies)
    lines = []
    for index, tally in enumerate(tallies):
        low, high = index * step, min((index + 1) * step - 1, top)
        bar = "#" * (round(tally / widest * _BARS) if widest else 0)
        lines.append(f"  {low:>6}-{high:<6} {tally:>6}  {bar}")
    mean = sum(counts) / len(counts)
    lines.append(
        f"  {len(counts)} chunks, mean {mean:.0f}, min {min(counts)}, max {max(counts)}, budget {budget}"
    )
    return lines


def add_arguments(parser: argparse.ArgumentParser, plans_default: str = "plans.yaml") -> None:
    """The arguments of this command, for its own parser and for a CLI that hosts it as a
    subcommand (``ingest inspect``, whose plans file comes from its settings: ``plans_default``
    says which)."""
    parser.add_argument("file", type=Path, help="the document to chunk")
    parser.add_argument(
        "--plans", type=Path, default=Path("plans.yaml"), help=f"plans file (default {plans_default})"
    )
    parser.add_argument("--plan", help="plan name (default: 'default', or the file's only plan)")
    parser.add_argument("--kind", help="document kind, when guessing from the file is not wanted")
    parser.add_argument("--level", choices=("parents", "children", "both"), default="both")
    parser.add_argument("--full", action="store_true", help="print each chunk's whole contextual text")
    parser.add_argument("--width", type=int, default=110, help="line width of the one-line form")


def run(
    args: argparse.Namespace,
    out: TextIO | None = None,
    *,
    limits: ParseLimits | None = None,
    name: str = "error",
) -> int:
    """Parse ``args.file`` (within ``limits``, default :class:`ParseLimits`'), chunk it with a
    plan's route for its kind, print the chunks to ``out`` (default stdout); return 0, or 1
    with the error on stderr after ``name:``."""
    out = out or sys.stdout
    try:
        document = parse_file(args.file, kind=args.kind, limits=limits)
        leveler = leveler_for(plan_routes(args.plans, args.plan), document.kind)
    except (IngestError, OSError, ValueError) as error:
        print(f"{name}: {error}", file=sys.stderr)
        return 1
    if leveler is None:
        print(f"{name}: the plan routes no {document.kind!r} documents and has no '*' route", file=sys.stderr)
        return 1
    parents = leveler.chunk_parents(document)
    children = leveler.chunk_children(document, parents)
    print(f"{args.file} ({document.kind}, {len(document.text)} characters)", file=out)
    levels = [("parents", leveler.parent, parents), ("children", leveler.child, children)]
    for name, chunker, chunks in levels:
        if args.level not in (name, "both"):
            continue
        settings = {k: v for k, v in chunker.settings().items() if k not in ("versions", "tokenizer")}
        print(f"\n== {name}: {len(chunks)} chunks, {settings}, tokenizer {chunker.tokenizer}", file=out)
        for chunk in chunks:
            print(render_chunk(chunk, args.width, full=args.full), file=out)
        print(f"\n{name} sizes (tokens):", file=out)
        for line in histogram([c.metadata.get("token_count", 0) for c in chunks], budget_of(chunker)):
            print(line, file=out)
    return 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Parse a file, chunk it with a plan's route for its kind, print the chunks; return 0 or 1."""
    parser = argparse.ArgumentParser(prog="python -m chunking.inspect", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv), out)


if __name__ == "__main__":
    raise SystemExit(main())
