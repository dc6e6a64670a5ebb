"""What the section chunker's output alone costs at character budgets, beside chonkie's whole run.

Run from the project root::

    python benchmarks/bench_chunk_floor.py            # shared corpus, 7 rounds, 512 characters

Three timings per round, each started as ``bench_chunking.py`` starts its own (right after a full
collection, ``benchmarks.common.start_clock``), in an order that rotates every round:

* ``section (ours)``: ``SectionChunker(chunk_size=512, tokenizer="character").chunk`` of every document;
* ``output only``: the section chunker's chunks made again from their spans and nothing else
  (no parsing of units, no splitting or packing): ``Chunk.made`` with its ``TextProvenance``, the
  id, the exact-slice check. It is the least any chunker costs that returns these chunks;
* ``output only, as plain records``: the same chunks as tuples of their values (id, span, text,
  tokens, heading path, kind), no models: what a lighter chunk type than the pydantic ``Chunk``
  the reference specifies would cost, for comparison;
* ``chonkie RecursiveChunker`` over every ``Document.text`` with the same tokenizer.

Each timing is given whole and without the collector's passes (timed through ``gc.callbacks``,
not switched off), with the full passes counted: a full pass over the parsed corpus costs about
0.1 s, and Python starts one after 121 young passes, that is once about 85,000 container objects
made in a timing are still alive. The report ends with the section chunker's work before its
output (its time without the collector less the output's), beside chonkie's whole run. Results go
to ``benchmarks/results/chunk-floor.json``.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple
from uuid import UUID

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_chunking import load_documents
from benchmarks.common import default_corpus, machine, median, start_clock, table, write_json
from chunking import Chunk, Document, SectionChunker, TextProvenance, load_tokenizer

SIZE = 512


class _Collector:
    """Time spent in the garbage collector, and its full passes, while it is on."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.full = 0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._started
        self.full += info["generation"] == 2


class _Record(NamedTuple):
    """A chunk as a plain tuple: the values a chunk model holds for a chunk with a span."""

    id: UUID
    index: int
    start: int
    end: int
    text: str
    token_count: int
    heading_path: tuple[str, ...]
    content_kind: str


def _spans(docs: list[Document]) -> list[list[tuple[int, int, int]]]:
    """Each document's section chunks at 512 characters as (start, end, tokens); page chunks
    (no span) are left out of the output-only timing."""
    chunker = SectionChunker(chunk_size=SIZE, tokenizer="character")
    out = []
    for doc in docs:
        spans = []
        for chunk in chunker.chunk(doc):
            if isinstance(chunk.provenance, TextProvenance):
                spans.append((chunk.provenance.start, chunk.provenance.end, chunk.metadata["token_count"]))
        out.append(spans)
    return out


Spans = list[list[tuple[int, int, int]]]


def _documents(
    docs: list[Document], spans: Spans
) -> Iterator[tuple[Document, str, Any, list[tuple[int, int, int]]]]:
    """Each document with its text, its chunk-id maker and its spans (what both remakes share)."""
    for doc, doc_spans in zip(docs, spans, strict=True):
        yield doc, doc.text, Chunk.ids_for(doc.id, doc.version_id, "0" * 16), doc_spans


def _output_only(docs: list[Document], spans: Spans) -> list[list[Chunk]]:
    now = datetime.now(UTC)
    out = []
    for doc, text, make_id, doc_spans in _documents(docs, spans):
        chunks = []
        for index, (start, end, tokens) in enumerate(doc_spans):
            provenance = TextProvenance.at(start, end)
            chunk = Chunk.made(
                document_id=doc.id,
                text=text[start:end],
                provenance=provenance,
                heading_path=[],
                content_kind="text",
                metadata={"token_count": tokens, "exact_slice": True},
                created_at=now,
            )
            fields = chunk.__dict__
            fields["index"] = index
            fields["id"] = make_id(provenance, index, 0)
            chunks.append(chunk)
        for chunk in chunks:  # the contract's exact-slice check
            span = chunk.provenance
            if text[span.start : span.end] != chunk.text:
                raise AssertionError("a remade chunk is not its slice")
        out.append(chunks)
    return out


def _records_only(docs: list[Document], spans: Spans) -> list[list[_Record]]:
    out = []
    for _, text, make_id, doc_spans in _documents(docs, spans):
        records = [
            _Record(
                make_id(TextProvenance.at(start, end), index, 0),
                index,
                start,
                end,
                text[start:end],
                tokens,
                (),
                "text",
            )
            for index, (start, end, tokens) in enumerate(doc_spans)
        ]
        for record in records:  # the contract's exact-slice check
            if text[record.start : record.end] != record.text:
                raise AssertionError("a remade record is not its slice")
        out.append(records)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="folder of documents (default ../shared/corpus)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    docs, _ = load_documents(args.corpus or default_corpus())
    spans = _spans(docs)
    chonkie = load_tokenizer("character").chonkie
    from chonkie import RecursiveChunker as ChonkieRecursiveChunker

    def section() -> Callable[[], Any]:
        chunker = SectionChunker(chunk_size=SIZE, tokenizer="character")
        chunker.chunk(docs[0])
        return lambda: [chunker.chunk(d) for d in docs]

    def chonkie_run() -> Callable[[], Any]:
        chunker = ChonkieRecursiveChunker(tokenizer=chonkie, chunk_size=SIZE)
        chunker.chunk(docs[0].text)
        return lambda: [chunker.chunk(d.text) for d in docs]

    systems: dict[str, Callable[[], Callable[[], Any]]] = {
        "section (ours)": section,
        "output only (section's chunks, remade)": lambda: lambda: _output_only(docs, spans),
        "output only, as plain records": lambda: lambda: _records_only(docs, spans),
        "chonkie RecursiveChunker": chonkie_run,
    }
    names = list(systems)
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in names}
    collector = _Collector()
    gc.callbacks.append(collector)
    try:
        for round_index in range(args.rounds):
            shift = round_index % len(names)
            for name in names[shift:] + names[:shift]:
                run = systems[name]()
                started = start_clock()
                collector.seconds, collector.full = 0.0, 0
                output = run()
                elapsed = time.perf_counter() - started
                runs[name].append((elapsed, elapsed - collector.seconds, collector.full))
                del output, run
    finally:
        gc.callbacks.remove(collector)
    chunks = sum(len(s) for s in spans)
    rows, results = [], {}
    for name in names:
        whole = median([r[0] for r in runs[name]])
        bare = median([r[1] for r in runs[name]])
        full = median([r[2] for r in runs[name]])
        results[name] = {"runs": runs[name], "median_seconds": whole, "median_without_collector": bare}
        rows.append([name, f"{whole:.3f}", f"{bare:.3f}", f"{full:g}"])
    text = table(["timing", "s (median)", "s without the collector", "full collections"], rows)
    bare_of = {name: results[name]["median_without_collector"] for name in names}
    before_output = bare_of["section (ours)"] - bare_of["output only (section's chunks, remade)"]
    text += (
        f"\n\nsection's work before its output (without the collector): {before_output:.3f} s,"
        f" {before_output / bare_of['chonkie RecursiveChunker']:.2f}x chonkie's whole run without it"
    )
    results["section before its output"] = {"median_without_collector": before_output}
    print(f"512 characters, {len(docs)} documents, {chunks} chunks with spans remade\n")
    print(text)
    report = {"machine": machine(), "chunks_remade": chunks, "systems": results, "table": text}
    write_json("chunk-floor.json", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
