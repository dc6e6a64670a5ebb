"""Chunking throughput: our section and recursive chunkers beside the splitters people would pick.

Run from the project root (peers come from the ``bench`` extra: ``pip install -e '.[bench]'``)::

    python benchmarks/bench_chunking.py            # shared corpus, 5 rounds, both tokenizers
    python benchmarks/bench_chunking.py --quick    # data/sample, 2 rounds: a smoke test

Every file of the corpus is parsed once with ``parse_file`` (not timed). Our section chunker gets
the ``Document``; every other system gets ``Document.text``. At 512 tokens, for the ``character``
and ``cl100k_base`` tokenizers, it times:

* ``section (ours)``: ``SectionChunker(chunk_size=512).chunk(document)`` (validation, ids included);
* ``recursive (ours)``: ``RecursiveChunker(chunk_size=512).split(text)``;
* ``chonkie RecursiveChunker`` with the very same chonkie tokenizer object;
* ``semchunk`` with the same tiktoken encoding (``len`` for characters), memoized as by default;
* ``semantic-text-splitter`` (Rust; its own embedded cl100k_base via ``from_tiktoken_model``);
* ``LangChain RecursiveCharacterTextSplitter`` with our token counter as ``length_function``;
* ``chonkie RecursiveChunker (tiktoken counts)``: chonkie over a plain tiktoken adapter, as
  people usually set it up (our ``.chonkie`` adapter counts with our faster exact counter);
* the tokenizer alone over every text once (the practical limit): tiktoken's encode (serial and
  its thread-pool batch) and our counter (bpe-openai's Rust count; ``len`` for characters).

Each round builds fresh instances (so no memo cache carries over between rounds), then times
each system over the whole corpus, in an order that rotates every round. Every timing starts
from the same heap, the parsed corpus and nothing else: an output is described after its first
round and dropped, so one system's chunks never slow the garbage collector in another's
timing. The table gives the median MB/s (UTF-8 bytes of the texts), chunks, the largest chunk
counted with our tokenizer, chunks over 512, and the share of chunks that are exact slices of
the input at their offsets (LangChain returns no offsets: its chunks are found in order with
``str.find``). Results go to ``benchmarks/results/chunking.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import (
    corpus_files,
    default_corpus,
    machine,
    median,
    start_clock,
    table,
    write_json,
)
from chunking import Document, RecursiveChunker, SectionChunker, load_tokenizer, parse_file
from chunking.errors import IngestError

SIZE = 512
TOKENIZERS = ("character", "cl100k_base")


@dataclass
class Piece:
    """One output chunk in a common form: its text and, when the system gives them, offsets."""

    text: str
    start: int | None
    end: int | None
    exact: bool | None = None  # the system's own claim (ours); None means check the offsets


Runner = Callable[[list[Document]], list[Any]]
Describer = Callable[[Document, Any], list[Piece]]


@dataclass
class System:
    name: str
    build: Callable[[], Runner]  # called once per round, outside the timing
    describe: Describer | None  # None: no chunks (the raw encode)


# ----------------------------------------------------------------------------- systems


def _ours_section(tokenizer: str) -> System:
    def build() -> Runner:
        chunker = SectionChunker(chunk_size=SIZE, tokenizer=tokenizer)
        return lambda docs: [chunker.chunk(d) for d in docs]

    def describe(doc: Document, chunks: Any) -> list[Piece]:
        pieces = []
        for c in chunks:
            start = getattr(c.provenance, "start", None)
            end = getattr(c.provenance, "end", None)
            exact = start is not None and c.metadata.get("exact_slice", True)
            pieces.append(Piece(c.text, start, end, exact))
        return pieces

    return System("section (ours)", build, describe)


def _ours_recursive(tokenizer: str) -> System:
    def build() -> Runner:
        chunker = RecursiveChunker(chunk_size=SIZE, tokenizer=tokenizer)
        return lambda docs: [chunker.split(d.text) for d in docs]

    def describe(doc: Document, pieces: Any) -> list[Piece]:
        return [Piece(p.text, p.start, p.end) for p in pieces]

    return System("recursive (ours)", build, describe)


def _chonkie(tokenizer: str) -> System:
    from chonkie import RecursiveChunker as ChonkieRecursiveChunker

    def build() -> Runner:
        chunker = ChonkieRecursiveChunker(tokenizer=load_tokenizer(tokenizer).chonkie, chunk_size=SIZE)
        return lambda docs: [chunker.chunk(d.text) for d in docs]

    def describe(doc: Document, chunks: Any) -> list[Piece]:
        return [Piece(c.text, c.start_index, c.end_index) for c in chunks]

    return System("chonkie RecursiveChunker", build, describe)


def _semchunk(tokenizer: str) -> System:
    import semchunk

    def build() -> Runner:
        semchunk.semchunk._memoized_token_counters.clear()  # a fresh cache every round
        if tokenizer == "character":
            chunker = semchunk.chunkerify(len, SIZE, memoize=False)
        else:
            # The tiktoken Encoding itself: semchunk builds its own (memoized) counter on it.
            chunker = semchunk.chunkerify(load_tokenizer(tokenizer).encoding, SIZE)
        return lambda docs: [chunker(d.text, offsets=True) for d in docs]

    def describe(doc: Document, result: Any) -> list[Piece]:
        chunks, offsets = result
        return [Piece(c, s, e) for c, (s, e) in zip(chunks, offsets, strict=True)]

    return System("semchunk", build, describe)


def _text_splitter(tokenizer: str) -> System:
    from semantic_text_splitter import TextSplitter

    def build() -> Runner:
        if tokenizer == "character":
            splitter = TextSplitter(SIZE)
        else:
            # Its embedded tiktoken-rs cl100k_base (no download); same ranks and pattern as ours.
            splitter = TextSplitter.from_tiktoken_model("gpt-4", SIZE)
        return lambda docs: [splitter.chunk_indices(d.text) for d in docs]

    def describe(doc: Document, result: Any) -> list[Piece]:
        return [Piece(c, s, s + len(c)) for s, c in result]

    return System("semantic-text-splitter", build, describe)


def _langchain(tokenizer: str) -> System:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    def build() -> Runner:
        count = len if tokenizer == "character" else load_tokenizer(tokenizer).count
        splitter = RecursiveCharacterTextSplitter(chunk_size=SIZE, chunk_overlap=0, length_function=count)
        return lambda docs: [splitter.split_text(d.text) for d in docs]

    def describe(doc: Document, result: Any) -> list[Piece]:
        pieces, position = [], 0
        for text in result:  # no offsets: find each chunk in order
            found = doc.text.find(text, position)
            if found < 0:
                pieces.append(Piece(text, None, None, False))
                continue
            pieces.append(Piece(text, found, found + len(text)))
            position = found + 1
        return pieces

    return System("LangChain RecursiveCharacterTextSplitter", build, describe)


def _raw(tokenizer: str, how: str) -> System:
    """The tokenizer alone over every text once: the practical limit of any exact chunker."""
    ours = load_tokenizer(tokenizer)
    backend = ours.encoding

    def build() -> Runner:
        if how == "count":
            count = ours.count
            return lambda docs: [count(d.text) for d in docs]
        if how == "batch":
            return lambda docs: [len(t) for t in backend.encode_ordinary_batch([d.text for d in docs])]
        encode = backend.encode if tokenizer == "character" else backend.encode_ordinary
        return lambda docs: [len(encode(d.text)) for d in docs]

    names = {
        "encode": "raw encode (chonkie)" if tokenizer == "character" else "raw encode (tiktoken)",
        "batch": "raw encode (tiktoken batch, threads)",
        "count": "raw count (our counter)",
    }
    return System(names[how], build, None)


def _chonkie_tiktoken(tokenizer: str) -> System:
    """chonkie as people set it up: AutoTokenizer over the tiktoken Encoding (tiktoken counts)."""
    from chonkie import RecursiveChunker as ChonkieRecursiveChunker
    from chonkie.tokenizer import AutoTokenizer

    def build() -> Runner:
        wrapped = AutoTokenizer(load_tokenizer(tokenizer).encoding)
        chunker = ChonkieRecursiveChunker(tokenizer=wrapped, chunk_size=SIZE)
        return lambda docs: [chunker.chunk(d.text) for d in docs]

    describe = _chonkie(tokenizer).describe
    return System("chonkie RecursiveChunker (tiktoken counts)", build, describe)


def systems_for(tokenizer: str) -> list[System]:
    out = [_ours_section(tokenizer), _ours_recursive(tokenizer), _chonkie(tokenizer)]
    for make in (_semchunk, _text_splitter, _langchain):
        try:
            out.append(make(tokenizer))
        except ImportError as error:
            print(f"skipped {make.__name__}: {error} (pip install -e '.[bench]')", file=sys.stderr)
    if tokenizer != "character":
        out.insert(3, _chonkie_tiktoken(tokenizer))
        out += [_raw(tokenizer, "encode"), _raw(tokenizer, "batch"), _raw(tokenizer, "count")]
    else:
        out += [_raw(tokenizer, "encode"), _raw(tokenizer, "count")]
    return out


# ----------------------------------------------------------------------------- measuring


def load_documents(corpus: Path) -> tuple[list[Document], list[str]]:
    documents, failed = [], []
    for path in corpus_files(corpus):
        try:
            documents.append(parse_file(path))
        except IngestError as error:
            failed.append(f"{path.name}: {str(error)[:120]}")
    return documents, failed


def quality(system: System, docs: list[Document], outputs: list[Any], count: Callable[[str], int]) -> dict:
    chunks = exact = over = 0
    largest = 0
    for doc, output in zip(docs, outputs, strict=True):
        for piece in system.describe(doc, output):
            chunks += 1
            tokens = count(piece.text)
            largest = max(largest, tokens)
            over += tokens > SIZE
            ok = piece.start is not None and doc.text[piece.start : piece.end] == piece.text
            if piece.exact is False:
                ok = False
            exact += ok
    return {
        "chunks": chunks,
        "largest_tokens": largest,
        "over_budget": over,
        "exact_slices": round(exact / chunks, 4) if chunks else None,
    }


def bench_tokenizer(tokenizer: str, docs: list[Document], rounds: int) -> dict[str, Any]:
    systems = systems_for(tokenizer)
    megabytes = sum(len(d.text.encode("utf-8")) for d in docs) / 1e6
    count = load_tokenizer(tokenizer).count
    times: dict[str, list[float]] = {s.name: [] for s in systems}
    described: dict[str, dict[str, Any]] = {}
    errors: dict[str, str] = {}
    for round_index in range(rounds):
        shift = round_index % len(systems)
        order = systems[shift:] + systems[:shift]
        for system in order:
            if system.name in errors:
                continue
            try:
                run = system.build()
                run(docs[:1])  # warm lazy imports and caches of the first call
                started = start_clock()
                output = run(docs)
                times[system.name].append(time.perf_counter() - started)
            except Exception as error:  # report a peer that fails instead of stopping the benchmark
                errors[system.name] = f"{type(error).__name__}: {str(error)[:200]}"
                continue
            # Every system is timed on the same heap, the parsed corpus and nothing else: its
            # output is described once and dropped, so no system's chunks lengthen the garbage
            # collector's passes in another system's timing.
            if system.describe is not None and system.name not in described:
                described[system.name] = quality(system, docs, output, count)
            del output, run
        print(f"  {tokenizer}: round {round_index + 1}/{rounds} done", file=sys.stderr)
    results = {}
    for system in systems:
        entry: dict[str, Any] = {"runs_seconds": [round(t, 4) for t in times[system.name]]}
        if system.name in errors:
            entry["error"] = errors[system.name]
        if times[system.name]:
            entry["median_seconds"] = round(median(times[system.name]), 4)
            entry["mb_per_s"] = round(megabytes / median(times[system.name]), 3)
        entry.update(described.get(system.name, {}))
        results[system.name] = entry
    return {
        "megabytes": round(megabytes, 3),
        "systems": results,
        "ratios": ratios(results),
        "ratio_rounds": ratio_spreads(results),
    }


RATIOS = (
    ("section / chonkie", "section (ours)", "chonkie RecursiveChunker"),
    ("recursive / chonkie", "recursive (ours)", "chonkie RecursiveChunker"),
    ("section / chonkie (tiktoken counts)", "section (ours)", "chonkie RecursiveChunker (tiktoken counts)"),
    ("section / raw encode", "section (ours)", "raw encode (tiktoken)"),
    ("section / raw encode", "section (ours)", "raw encode (chonkie)"),
    ("section / raw encode batch", "section (ours)", "raw encode (tiktoken batch, threads)"),
    ("section / raw count (our counter)", "section (ours)", "raw count (our counter)"),
    ("section / semchunk", "section (ours)", "semchunk"),
    ("section / semantic-text-splitter", "section (ours)", "semantic-text-splitter"),
    ("section / LangChain", "section (ours)", "LangChain RecursiveCharacterTextSplitter"),
)


def ratios(results: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """Speed ratios of the medians (the first pair present for a name wins)."""
    out: dict[str, float | None] = {}
    for name, a, b in RATIOS:
        x, y = (results.get(system, {}).get("mb_per_s") for system in (a, b))
        if out.get(name) is None:
            out[name] = round(x / y, 3) if x and y else None
    return out


def ratio_spreads(results: dict[str, dict[str, Any]]) -> dict[str, list[float]]:
    """Each ratio measured within each round: [median, lowest, highest] over the rounds. The
    two systems of a pair run in the same round, seconds apart, so a round's ratio is a paired
    measurement that the VM's drift between rounds does not move."""
    out: dict[str, list[float]] = {}
    for name, a, b in RATIOS:
        times_a = results.get(a, {}).get("runs_seconds", [])
        times_b = results.get(b, {}).get("runs_seconds", [])
        if name not in out and times_a and len(times_a) == len(times_b):
            paired = [tb / ta for ta, tb in zip(times_a, times_b, strict=True) if ta]
            out[name] = [round(value, 3) for value in (median(paired), min(paired), max(paired))]
    return out


def render(report: dict[str, Any]) -> str:
    out = []
    for tokenizer, data in report["tokenizers"].items():
        rows = []
        for name, entry in data["systems"].items():
            exact = entry.get("exact_slices")
            rows.append(
                [
                    name,
                    f"{entry['mb_per_s']:.2f}" if "mb_per_s" in entry else entry.get("error", "-"),
                    entry.get("chunks", "-"),
                    entry.get("largest_tokens", "-"),
                    entry.get("over_budget", "-"),
                    "-" if exact is None else f"{exact:.1%}",
                ]
            )
        out.append(f"### {tokenizer}, {SIZE} tokens, {data['megabytes']} MB of text\n")
        out.append(table(["system", "MB/s", "chunks", "largest", "over 512", "exact slices"], rows))
        out.append("")
        out.append(
            table(
                ["ratio", "of medians", "per round: median (lowest-highest)"],
                [
                    [
                        k,
                        "-" if v is None else f"{v:.2f}x",
                        "-"
                        if k not in data.get("ratio_rounds", {})
                        else "{:.2f}x ({:.2f}-{:.2f}x)".format(*data["ratio_rounds"][k]),
                    ]
                    for k, v in data["ratios"].items()
                ],
            )
        )
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="folder of documents (default ../shared/corpus)")
    parser.add_argument("--rounds", type=int, help="timed rounds per system (default 5; 2 with --quick)")
    parser.add_argument("--tokenizer", action="append", choices=TOKENIZERS, help="repeatable")
    parser.add_argument("--quick", action="store_true", help="data/sample, 2 rounds: a smoke test")
    parser.add_argument("--output", default="chunking.json", help="file name under benchmarks/results")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus(args.quick)
    rounds = args.rounds or (2 if args.quick else 5)
    docs, failed = load_documents(corpus)
    print(f"{len(docs)} documents parsed from {corpus} ({len(failed)} failed to parse)", file=sys.stderr)
    report: dict[str, Any] = {
        "benchmark": "chunking",
        "machine": machine(),
        "corpus": str(corpus),
        "documents": len(docs),
        "parse_failures": failed,
        "size": SIZE,
        "rounds": rounds,
        "tokenizers": {},
    }
    for tokenizer in args.tokenizer or TOKENIZERS:
        report["tokenizers"][tokenizer] = bench_tokenizer(tokenizer, docs, rounds)
    text = render(report)
    print(text)
    if not args.quick or args.output != "chunking.json":
        path = write_json(args.output, report | {"table": text})
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
