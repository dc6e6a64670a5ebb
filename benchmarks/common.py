"""Shared helpers of the benchmark scripts: where the corpus is, machine facts, timing, tables."""

from __future__ import annotations

import datetime as _dt
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED_CORPUS = ROOT.parent / "shared" / "corpus"
SAMPLE = ROOT / "data" / "sample"
RESULTS = ROOT / "benchmarks" / "results"
# Files at the top of a corpus folder that describe it and are not documents.
_NOT_DOCUMENTS = {"README.md", "MANIFEST.tsv"}


def default_corpus(quick: bool = False) -> Path:
    """The shared corpus when present (and not ``quick``), else the project's sample."""
    if not quick and SHARED_CORPUS.is_dir():
        return SHARED_CORPUS
    return SAMPLE


def corpus_files(corpus: Path) -> list[Path]:
    """Every document file under ``corpus`` in a stable order (hidden files and the README skipped)."""
    files = []
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or any(part.startswith(".") for part in path.relative_to(corpus).parts):
            continue
        if path.parent == corpus and path.name in _NOT_DOCUMENTS:
            continue
        files.append(path)
    return files


def machine() -> dict[str, Any]:
    """Facts that qualify every number: date, kernel, cores, Python, key package versions."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for name in (
        "chonkie",
        "tiktoken",
        "bpe-openai",
        "semchunk",
        "semantic-text-splitter",
        "langchain-text-splitters",
        "langchain-core",
        "llama-index-core",
        "langchain-community",
        "cocoindex",
        "wordllama",
        "duckdb",
        "dagster",
    ):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "uname": " ".join(platform.uname()),
        "nproc": os.cpu_count(),
        "python": sys.version.split()[0],
        "commit": commit,
        "packages": versions,
    }


def start_clock() -> float:
    """Collect garbage, then return ``time.perf_counter()``: the time a measurement starts at.

    Without the collection, garbage the harness made (the ids it compares between steps, a
    system's dropped output) would bring on a full pass of Python's collector inside the next
    system's timing: 30 ms of an edit step measured this way. Garbage a timed step makes
    itself is still collected, and counted, inside it.
    """
    gc.collect()
    return time.perf_counter()


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def write_json(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
    return path


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table (also readable in a terminal)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells[1:]:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    return "\n".join(lines)
