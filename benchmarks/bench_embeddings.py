"""Incremental embeddings against LangChain's ``index()``, on the same corpus, model and sequence.

Run from the project root (``pip install langchain-core langchain-classic langchain-text-splitters``)::

    python benchmarks/bench_embeddings.py [--corpus DIR] [--quick]

The sequence, for each system, on a copy of the corpus: a full run; a no-op; one file edited;
child size 256 -> 200 tokens (cl100k_base); the old size back. Counted per step: texts given to
the embedding model (a wrapper around the model counts them, for LangChain its ``Embeddings``;
for the engine its own count, checked against the rows added to ``vectors``), calls, seconds.

* **engine**: ``IngestEngine.run_pending()`` (the steps the assets run, worker processes as by
  default) with ``embedding: {model: wordllama:l2_supercat_256, text: contextual}``; the
  "distinct new" column is the number of current child texts that had no vector before the
  step, which is what the engine should embed.
* **LangChain index()**: files parsed by our ``parse_file`` (its loader), split by
  ``RecursiveCharacterTextSplitter`` at the same token sizes (our cl100k counter), indexed with
  an ``InMemoryRecordManager`` into an ``InMemoryVectorStore`` with ``cleanup="full"``
  (measured with ``"incremental"``, a no-op re-embedded 4216 of 10274 chunks: that cleanup runs
  after each batch of 256 and deletes the batch's sources' chunks not seen yet, which the next
  batches then embed again),
  the same wordllama model wrapped as LangChain ``Embeddings``.

Results go to ``benchmarks/results/embeddings.json`` and a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import corpus_files, default_corpus, machine, start_clock, table, write_json

MODEL = "wordllama:l2_supercat_256"
PARENT, CHILD, NEW_CHILD = 1024, 256, 200
STEPS = ("full", "no-op", "one edit", f"child {CHILD} -> {NEW_CHILD}", f"child back to {CHILD}")


def plans_yaml(child: int) -> str:
    return f"""plans:
  default:
    embedding: {{model: {MODEL}, text: contextual}}
    routes:
      chat:
        parent: {{strategy: turn-window, chunk_size: {PARENT}}}
        child: {{strategy: recursive, chunk_size: {child}}}
      "*":
        parent: {{strategy: section, chunk_size: {PARENT}}}
        child: {{strategy: section, chunk_size: {child}}}
"""


class Workspace:
    """A copy of the corpus and a plans file, shared by one system's steps."""

    def __init__(self, root: Path, corpus: Path) -> None:
        self.root, self.inbox, self.plans = root, root / "inbox", root / "plans.yaml"
        for path in corpus_files(corpus):
            target = self.inbox / path.relative_to(corpus)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        self.set_child(CHILD)

    def set_child(self, child: int) -> None:
        self.child = child
        self.plans.write_text(plans_yaml(child))

    def edit_one(self) -> None:
        markdown = sorted(self.inbox.rglob("*.md"))
        with markdown[len(markdown) // 2].open("a", encoding="utf-8") as handle:
            handle.write("\n\nAn appended paragraph: the benchmark edits one file and nothing else.\n")

    def steps(self) -> list[Any]:
        return [
            lambda: None,
            lambda: None,
            self.edit_one,
            lambda: self.set_child(NEW_CHILD),
            lambda: self.set_child(CHILD),
        ]


class Engine:
    name = "engine (run_pending)"

    def __init__(self, ws: Workspace) -> None:
        self.ws, self.db = ws, ws.root / "engine.duckdb"

    def _hashes(self) -> tuple[set[str], set[str]]:
        import duckdb

        if not self.db.exists():
            return set(), set()
        with duckdb.connect(str(self.db), read_only=True) as con:
            stored = {r[0] for r in con.execute("SELECT text_hash FROM vectors").fetchall()}
            current = {r[0] for r in con.execute("SELECT text_hash FROM chunk_vectors").fetchall()}
        return stored, current

    def step(self) -> dict[str, Any]:
        from ingest_assets.embeddings import load_model
        from ingest_assets.engine import IngestEngine
        from ingest_assets.plans import load_plans
        from ingest_assets.store import IngestStore

        plans = load_plans(self.ws.plans)
        load_model(MODEL)  # the query-side model is not what is timed
        stored, _ = self._hashes()
        started = start_clock()
        store = IngestStore(self.db)
        report = IngestEngine(store, self.ws.inbox, plans).run_pending()
        wall = time.perf_counter() - started
        # The embeddings step's own wall time (step_timings), beside the model's seconds.
        (step,) = store.query(
            "SELECT coalesce(sum(seconds), 0) FROM step_timings WHERE step = 'embed' AND run_id = ?",
            [store.run_id],
        )[0]
        after, current = self._hashes()
        results = [r.total for r in report.chunks.get("embeddings", {}).values()]
        return {
            "seconds": round(wall, 2),
            "embed_step_seconds": round(step, 2),
            "texts": sum(r.texts_embedded for r in results),
            "calls": sum(r.embed_calls for r in results),
            "model_seconds": round(sum(r.embedding_seconds for r in results), 2),
            "vectors_added": len(after - stored),
            "distinct_new": len(current - stored),
            "current_texts": len(current),
            "chunker_calls": report.chunker_calls,
        }


class LangChainIndex:
    name = "LangChain index()"

    def __init__(self, ws: Workspace) -> None:
        from langchain_core.embeddings import Embeddings
        from langchain_core.indexing import InMemoryRecordManager
        from langchain_core.vectorstores import InMemoryVectorStore

        from benchmarks.e2e_peers import wordllama_as_its_users_load_it

        model = wordllama_as_its_users_load_it()

        class Counted(Embeddings):
            calls = texts = 0
            seconds = 0.0

            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                Counted.calls += 1
                Counted.texts += len(texts)
                began = time.perf_counter()
                vectors = model.embed(list(texts), norm=True).tolist()
                Counted.seconds += time.perf_counter() - began
                return vectors

            def embed_query(self, text: str) -> list[float]:
                return model.embed([text], norm=True)[0].tolist()

        self.ws, self.counted = ws, Counted
        self.store = InMemoryVectorStore(Counted())
        self.records = InMemoryRecordManager("bench")
        self.records.create_schema()

    def step(self) -> dict[str, Any]:
        from langchain_core.documents import Document as LCDocument
        from langchain_core.indexing import index
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        from chunking import load_tokenizer, parse_file
        from chunking.errors import IngestError

        self.counted.calls = self.counted.texts = 0
        self.counted.seconds = 0.0
        started = start_clock()
        counter = load_tokenizer("cl100k_base").count
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=self.ws.child, chunk_overlap=0, length_function=counter
        )
        docs = []
        for path in sorted(p for p in self.ws.inbox.rglob("*") if p.is_file()):
            try:
                docs.append(LCDocument(page_content=parse_file(path).text, metadata={"source": str(path)}))
            except IngestError:
                continue
        result = index(
            splitter.split_documents(docs),
            self.records,
            self.store,
            cleanup="full",
            source_id_key="source",
            batch_size=256,
        )
        wall = time.perf_counter() - started
        return {
            "seconds": round(wall, 2),
            "texts": self.counted.texts,
            "calls": self.counted.calls,
            "model_seconds": round(self.counted.seconds, 2),
            "index_result": dict(result),
        }


def run(system: type, corpus: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as tmp:
        ws = Workspace(Path(tmp), corpus)
        runner = system(ws)
        out = []
        for name, change in zip(STEPS, ws.steps(), strict=True):
            change()
            out.append({"step": name, **runner.step()})
            print(f"{runner.name:>22}  {name:<20} {out[-1]}", file=sys.stderr, flush=True)
        return out


def render(report: dict[str, Any]) -> str:
    ours, theirs = report["engine"], report["langchain"]
    rows = []
    for a, b in zip(ours, theirs, strict=True):
        rows.append(
            [
                a["step"],
                f"{a['texts']} ({a['distinct_new']} distinct new)",
                a["calls"],
                f"{a['seconds']} s (step {a['embed_step_seconds']} s, {a['model_seconds']} s model)",
                b["texts"],
                b["calls"],
                f"{b['seconds']} s ({b['model_seconds']} s model)",
            ]
        )
    headers = [
        "step",
        "engine texts",
        "engine calls",
        "engine time",
        "LangChain texts",
        "LC calls",
        "LC time",
    ]
    return table(headers, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="folder of documents (default: the shared corpus)")
    parser.add_argument("--quick", action="store_true", help="the bundled sample instead")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus(args.quick)
    report: dict[str, Any] = {"machine": machine(), "corpus": str(corpus), "model": MODEL}
    report["files"] = len(corpus_files(corpus))
    report["engine"] = run(Engine, corpus)
    report["langchain"] = run(LangChainIndex, corpus)
    print(render(report))
    if args.quick:  # a smoke run: nothing written
        return 0
    path = write_json("embeddings.json", report)
    print(f"\n{report['files']} files, {corpus}; results in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
