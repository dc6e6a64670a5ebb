"""Incremental ingestion: full run, no-op re-run, one edited file, child-size change.

Run from the project root (peers from the ``bench`` extra plus ``langchain-classic`` for
``SQLRecordManager``)::

    python benchmarks/bench_incremental.py            # shared corpus
    python benchmarks/bench_incremental.py --quick    # data/sample: a smoke test

The corpus is copied into a temporary inbox. Each system then goes through the same four steps,
in order, on its own state:

1. ``full``: from nothing;
2. ``noop``: again with nothing changed;
3. ``edit``: one paragraph appended to one Markdown file;
4. ``child-size``: the child chunk size goes from 256 to 200 tokens (``cl100k_base``).

Systems:

* ``ingest run`` (end to end, the headline: the path users take): the ``ingest run --json``
  command in a child process (Python and Dagster start-up included), on its own DuckDB file and
  DAGSTER_HOME; with ``--baseline REV`` also the ``ingest run`` of commit REV (a git worktree
  of it, run with this environment's packages), so a change is measured before and after in
  one run;
* ``engine``: ``IngestEngine.run_pending()``, the same sequence of steps the assets run, in this
  process without Dagster;
* ``LangChain index()``: files parsed by our ``parse_file`` (its loader), split by
  ``RecursiveCharacterTextSplitter`` (our counter) and indexed with a ``SQLRecordManager``
  (sqlite in memory) into an ``InMemoryVectorStore`` with ``DeterministicFakeEmbedding``,
  ``cleanup="full"``;
* ``LlamaIndex IngestionPipeline``: the same documents, ``SentenceSplitter`` (our encoding) and
  a ``MockEmbedding``, with ``SimpleDocumentStore`` (upserts and delete), ``IngestionCache`` and a
  ``SimpleVectorStore``.

Each system goes through the four steps three times (``--repeat``), each time on a fresh copy
of the corpus: the table gives each step's median seconds, and each step's share of the full run
is the median of the shares measured within one sequence (with their range). A single sequence
moved by up to a third between runs on a 2-CPU VM whose speed drifts.

Ours do two levels of chunking (parents of 1024 and children of 256 tokens) and write graph
records; the peers do one level (256). Chunks written, deleted and kept are counted the same way
for all: ids in the current view (vector store) after a step that were not there before, ids that
left it, and ids that stayed. Results go to ``benchmarks/results/incremental.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import (
    ROOT,
    corpus_files,
    default_corpus,
    machine,
    median,
    start_clock,
    table,
    write_json,
)

STEPS = ("full", "noop", "edit", "child-size")
PARENT, CHILD, NEW_CHILD = 1024, 256, 200
TOKENIZER = "cl100k_base"


def plans_yaml(child: int) -> str:
    return f"""plans:
  default:
    routes:
      chat:
        parent: {{strategy: turn-window, chunk_size: {PARENT}, tokenizer: {TOKENIZER}}}
        child: {{strategy: recursive, chunk_size: {child}, tokenizer: {TOKENIZER}}}
      "*":
        parent: {{strategy: section, chunk_size: {PARENT}, tokenizer: {TOKENIZER}}}
        child: {{strategy: section, chunk_size: {child}, tokenizer: {TOKENIZER}}}
"""


class Workspace:
    """A copy of the corpus and a plans file in a temporary folder, shared by one system's steps."""

    def __init__(self, root: Path, corpus: Path) -> None:
        self.root = root
        self.inbox = root / "inbox"
        for path in corpus_files(corpus):
            target = self.inbox / path.relative_to(corpus)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        self.plans = root / "plans.yaml"
        self.plans.write_text(plans_yaml(CHILD))
        self.child = CHILD

    def edit_one(self) -> Path:
        markdown = sorted(self.inbox.rglob("*.md"))
        target = (
            markdown[len(markdown) // 2]
            if markdown
            else sorted(p for p in self.inbox.rglob("*") if p.is_file())[0]
        )
        with target.open("a", encoding="utf-8") as handle:
            handle.write("\n\nAn appended paragraph: the benchmark edits one file and nothing else.\n")
        return target

    def set_child(self, child: int) -> None:
        self.plans.write_text(plans_yaml(child))
        self.child = child


def diff(before: set[str], after: set[str]) -> dict[str, int]:
    return {"written": len(after - before), "deleted": len(before - after), "kept": len(after & before)}


# ----------------------------------------------------------------------------- ours


def _current_ids(db: Path) -> set[str]:
    import duckdb

    if not db.exists():
        return set()
    with duckdb.connect(str(db), read_only=True) as con:
        # As text: no UUID objects for the collector to walk later.
        return {r[0] for r in con.execute("SELECT id::VARCHAR FROM current_chunks").fetchall()}


def _stored_rows(db: Path) -> int:
    import duckdb

    if not db.exists():
        return 0
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM chunks").fetchone()[0]


def warm_tokenizers(plans: list[Any]) -> None:
    """Load every tokenizer the plans count with, before the clock starts.

    A process loads a tokenizer once (bpe-openai builds cl100k in about 25 ms) and keeps it;
    the peers' tokenizers are loaded before their timed steps too. Without this, the engine's
    steps would pay it whenever the work before them ran in worker processes (a full run does),
    so an edit after a full run would time a load the previous step made elsewhere.
    """
    for plan in plans:
        for route in plan.routes.values():
            for chunker in (route.parent, route.child):
                chunker.count_tokens("warm")


class EndToEnd:
    """``ingest run --json`` in a child process: the path users take (the headline)."""

    name = "ingest run (end to end)"
    code = ROOT  # the checkout whose code runs

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.db = ws.root / f"{type(self).__name__}.duckdb"
        home = ws.root / f"{type(self).__name__}-dagster_home"
        self.env = {**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(self.code)}
        Path(self.env["DAGSTER_HOME"]).mkdir(exist_ok=True)
        shutil.copyfile(ROOT / "dagster.yaml", Path(self.env["DAGSTER_HOME"]) / "dagster.yaml")

    def step(self) -> dict[str, Any]:
        before, rows = _current_ids(self.db), _stored_rows(self.db)
        command = [
            sys.executable,
            "-m",
            "ingest_assets.cli",
            "run",
            "--inbox",
            str(self.ws.inbox),
            "--db",
            str(self.db),
            "--plans",
            str(self.ws.plans),
            "--json",
        ]
        started = start_clock()
        done = subprocess.run(
            command, cwd=self.code, env=self.env, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - started
        if done.returncode:
            raise RuntimeError(f"ingest run failed ({done.returncode}): {done.stderr[-2000:]}")
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        return {
            "seconds": round(wall, 3),
            "in_process_seconds": summary.get("wall_seconds"),
            "chunker_calls": summary.get("chunker_calls"),
            "chunk_sets": summary.get("chunk_sets"),
            "embeddings": summary.get("embeddings"),
            "chunk_rows_written": _stored_rows(self.db) - rows,
            **diff(before, _current_ids(self.db)),
        }


class BaselineEndToEnd(EndToEnd):
    """``ingest run`` of another commit (``--baseline REV``, checked out in a git worktree), on the
    same corpus in the same run: before and after a change, side by side."""

    name = "ingest run, baseline"
    code: Path = ROOT

    def __init__(self, ws: Workspace) -> None:
        if BaselineEndToEnd.code == ROOT:
            raise ImportError("no --baseline REV given")
        super().__init__(ws)
        self.name = f"ingest run at {BASELINE_REV}"


BASELINE_REV = ""


def checkout(rev: str, folder: Path) -> Path:
    """A git worktree of ``rev`` in ``folder`` (its code runs with this environment's packages)."""
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(folder), rev], cwd=ROOT, check=True, capture_output=True
    )
    return folder


class Engine:
    """The engine's own driver, ``IngestEngine.run_pending()``, in this process without Dagster:
    the same sequence of steps the assets run, over the partitions with work."""

    name = "engine run_pending (no Dagster)"
    database = "engine.duckdb"

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.db = ws.root / self.database

    def step(self) -> dict[str, Any]:
        from ingest_assets.engine import IngestEngine
        from ingest_assets.plans import load_plans
        from ingest_assets.store import IngestStore

        plans = load_plans(self.ws.plans)  # builds chunkers: not timed
        warm_tokenizers(plans)
        before, rows = _current_ids(self.db), _stored_rows(self.db)
        started = start_clock()
        report = IngestEngine(IngestStore(self.db), self.ws.inbox, plans).run_pending()
        wall = time.perf_counter() - started
        created = {
            role: sum(r.total.created for r in report.chunks.get(step, {}).values())
            for role, step in (
                ("parent", "parent_chunks"),
                ("child", "child_chunks"),
                ("graph", "graph_nodes"),
            )
        }
        parsed = report.documents["documents"].total.parsed if "documents" in report.documents else 0
        return {
            "seconds": round(wall, 3),
            "chunker_calls": report.chunker_calls,
            "sets_created": created,
            "parsed": parsed,
            "chunk_rows_written": _stored_rows(self.db) - rows,
            **diff(before, _current_ids(self.db)),
        }


def _load_texts(inbox: Path) -> list[tuple[str, str]]:
    """(source path, text) of every file, parsed by our parser: the peers' loader."""
    from chunking import parse_file
    from chunking.errors import IngestError

    out = []
    for path in sorted(p for p in inbox.rglob("*") if p.is_file()):
        try:
            out.append((str(path), parse_file(path).text))
        except IngestError:
            continue
    return out


class LangChainIndex:
    name = "LangChain index()"

    def __init__(self, ws: Workspace) -> None:
        from langchain_classic.indexes import SQLRecordManager
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from langchain_core.vectorstores import InMemoryVectorStore

        self.ws = ws
        self.store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
        self.records = SQLRecordManager("bench", db_url="sqlite:///:memory:")
        self.records.create_schema()

    def step(self) -> dict[str, Any]:
        from langchain_core.documents import Document as LCDocument
        from langchain_core.indexing import index
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        from chunking import load_tokenizer

        before = set(self.store.store)
        started = start_clock()
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=self.ws.child, chunk_overlap=0, length_function=load_tokenizer(TOKENIZER).count
        )
        docs = [
            LCDocument(page_content=text, metadata={"source": source})
            for source, text in _load_texts(self.ws.inbox)
        ]
        result = index(
            splitter.split_documents(docs),
            self.records,
            self.store,
            cleanup="full",
            source_id_key="source",
        )
        wall = time.perf_counter() - started
        return {
            "seconds": round(wall, 3),
            "index_result": dict(result),
            **diff(before, set(self.store.store)),
        }


class LlamaIndexPipeline:
    name = "LlamaIndex IngestionPipeline"

    def __init__(self, ws: Workspace) -> None:
        from llama_index.core.ingestion import DocstoreStrategy, IngestionCache, IngestionPipeline
        from llama_index.core.storage.docstore import SimpleDocumentStore
        from llama_index.core.vector_stores import SimpleVectorStore

        self.ws = ws
        self.docstore = SimpleDocumentStore()
        self.cache = IngestionCache()
        self.vectors = SimpleVectorStore()
        self._pipeline = lambda transformations: IngestionPipeline(
            transformations=transformations,
            docstore=self.docstore,
            cache=self.cache,
            vector_store=self.vectors,
            docstore_strategy=DocstoreStrategy.UPSERTS_AND_DELETE,
        )

    def _ids(self) -> set[str]:
        return set(self.vectors.data.embedding_dict)

    def step(self) -> dict[str, Any]:
        from llama_index.core import Document as LIDocument
        from llama_index.core.embeddings import MockEmbedding
        from llama_index.core.node_parser import SentenceSplitter

        from chunking import load_tokenizer

        encode = load_tokenizer(TOKENIZER).chonkie.tokenizer.encode_ordinary
        before = self._ids()
        started = start_clock()
        pipeline = self._pipeline(
            [
                SentenceSplitter(chunk_size=self.ws.child, chunk_overlap=0, tokenizer=encode),
                MockEmbedding(embed_dim=16),
            ]
        )
        docs = [LIDocument(text=text, id_=source) for source, text in _load_texts(self.ws.inbox)]
        nodes = pipeline.run(documents=docs)
        wall = time.perf_counter() - started
        return {"seconds": round(wall, 3), "nodes_processed": len(nodes), **diff(before, self._ids())}


SYSTEMS: dict[str, Callable[[Workspace], Any]] = {
    "cli": EndToEnd,
    "cli-baseline": BaselineEndToEnd,
    "engine": Engine,
    "langchain": LangChainIndex,
    "llamaindex": LlamaIndexPipeline,
}


def run_system(key: str, corpus: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"bench-{key}-") as tmp:
        ws = Workspace(Path(tmp), corpus)
        try:
            system = SYSTEMS[key](ws)
        except ImportError as error:
            return {"name": key, "error": f"not installed: {error}"}
        results: dict[str, Any] = {"name": system.name}
        for step in STEPS:
            if step == "edit":
                results["edited_file"] = ws.edit_one().name
            elif step == "child-size":
                ws.set_child(NEW_CHILD)
            try:
                results[step] = system.step()
            except Exception as error:  # report and go on with the other systems
                results[step] = {"error": f"{type(error).__name__}: {str(error)[:500]}"}
                break
            print(f"  {system.name}: {step} {results[step].get('seconds')} s", file=sys.stderr)
        full = results.get("full", {}).get("seconds")
        results["share_of_full"] = {
            step: round(results[step]["seconds"] / full, 4)
            for step in STEPS[1:]
            if full and "seconds" in results.get(step, {})
        }
        return results


def run_repeated(key: str, corpus: Path, repeats: int) -> dict[str, Any]:
    """:func:`run_system` ``repeats`` times, each on a fresh workspace: median seconds per step,
    median (and range) of the per-sequence shares of the full run. Written, deleted and kept
    counts are the same in every sequence (ids are deterministic); the last one's are kept."""
    runs = [run_system(key, corpus) for _ in range(repeats)]
    merged = dict(runs[-1])
    if repeats == 1 or "error" in merged:
        return merged
    for step in STEPS:
        entries = [run.get(step, {}) for run in runs]
        failed = next((entry for entry in entries if "error" in entry), None)
        if failed is not None:
            merged[step] = failed
        elif all("seconds" in entry for entry in entries):
            times = [entry["seconds"] for entry in entries]
            merged[step] = {**merged[step], "seconds": round(median(times), 3), "runs_seconds": times}
    shares: dict[str, float] = {}
    ranges: dict[str, list[float]] = {}
    for step in STEPS[1:]:
        values = [run["share_of_full"][step] for run in runs if step in run.get("share_of_full", {})]
        if len(values) == repeats:
            shares[step] = round(median(values), 4)
            ranges[step] = [min(values), max(values)]
    merged["share_of_full"], merged["share_of_full_range"], merged["repeats"] = shares, ranges, repeats
    return merged


def render(report: dict[str, Any]) -> str:
    rows = []
    for data in report["systems"].values():
        for step in STEPS:
            entry = data.get(step)
            if entry is None:
                continue
            if "error" in entry:
                rows.append([data["name"], step, entry["error"][:80], "", "", "", "", ""])
                continue
            share = data["share_of_full"].get(step)
            spread = data.get("share_of_full_range", {}).get(step)
            shown = "-" if share is None else f"{share:.1%}"
            if spread:
                shown += f" ({spread[0]:.1%}-{spread[1]:.1%})"
            rows.append(
                [
                    data["name"],
                    step,
                    f"{entry['seconds']:.2f}",
                    shown,
                    entry["written"],
                    entry["deleted"],
                    entry["kept"],
                    entry.get("chunker_calls", "-"),
                ]
            )
    return table(
        ["system", "step", "seconds", "of full", "written", "deleted", "kept", "chunker calls"], rows
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="folder of documents (default ../shared/corpus)")
    parser.add_argument("--quick", action="store_true", help="data/sample: a smoke test")
    parser.add_argument("--system", action="append", choices=sorted(SYSTEMS), help="repeatable")
    parser.add_argument("--repeat", type=int, help="sequences per system (default 3; 1 with --quick)")
    parser.add_argument("--output", default="incremental.json", help="file name under benchmarks/results")
    parser.add_argument(
        "--baseline", metavar="REV", help="also run `ingest run` of this commit (cli-baseline)"
    )
    args = parser.parse_args(argv)
    global BASELINE_REV
    worktree = None
    if args.baseline:
        worktree = Path(tempfile.mkdtemp(prefix="bench-baseline-")) / "code"
        BaselineEndToEnd.code = checkout(args.baseline, worktree)
        BASELINE_REV = args.baseline
    repeats = args.repeat or (1 if args.quick else 3)
    corpus = args.corpus or default_corpus(args.quick)
    report: dict[str, Any] = {
        "benchmark": "incremental",
        "machine": machine(),
        "corpus": str(corpus),
        "files": len(corpus_files(corpus)),
        "settings": {"parent": PARENT, "child": CHILD, "new_child": NEW_CHILD, "tokenizer": TOKENIZER},
        "repeats": repeats,
        "systems": {},
    }
    keys = args.system or [k for k in SYSTEMS if k != "cli-baseline" or args.baseline]
    try:
        for key in keys:
            report["systems"][key] = run_repeated(key, corpus, repeats)
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
    text = render(report)
    print(text)
    if not args.quick or args.output != "incremental.json":
        print(f"wrote {write_json(args.output, report | {'table': text})}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
