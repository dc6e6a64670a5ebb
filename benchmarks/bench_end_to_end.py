"""End to end against the peers, every system embedding for real and persisting to local disk.

Run from the project root after ``pip install -e '.[bench]'``::

    python benchmarks/bench_end_to_end.py             # shared corpus, three sequences
    python benchmarks/bench_end_to_end.py --quick     # data/sample, one sequence: a smoke run

Every system goes through the same sequence on its own copy of the corpus and its own stores:

1. ``full``: from nothing;
2. ``noop``: again with nothing changed;
3. ``edit``: one paragraph appended to one Markdown file;
4. ``child-size``: the child chunk size goes from 256 to 200 tokens (``cl100k_base``).

Systems, each embedding with the plan's model (``wordllama:l2_supercat_256``, loaded offline
from its wheel; nothing is downloaded):

* ``cli``: ``ingest run --json`` in a child process (Python, imports, the model's load and the
  Dagster runs included) on its own DuckDB file and DAGSTER_HOME, the plan with
  ``embedding: {model: ..., text: contextual}``;
* ``engine``: ``IngestEngine.run_pending()`` in this process (the model loaded before the clock,
  as for the peers);
* ``langchain``, ``llamaindex``: see ``benchmarks/e2e_peers.py``;
* ``cocoindex``: see ``benchmarks/e2e_cocoindex.py``;
* ``langchain-cold``, ``llamaindex-cold``, ``cocoindex-cold``: the same peers, each step in a new
  Python process (``benchmarks/e2e_cold.py``: start-up, imports and the model's load included),
  as a user's indexing script runs and as ``ingest run`` is timed. ``ingest run`` is compared
  with these, the engine with the peers in this process.

Ours make two levels (parents of 1024 and children of 256 tokens), embed the children with their
heading path, and write graph records; the peers make one level. Counted per step: seconds,
texts the model was given, and chunk ids in each system's store after the step against before
(written, deleted, kept). ``re-split`` says whether the child-size step replaced chunks and made
them smaller. Sequences are interleaved (sequence 1 of every system, then sequence 2, ...), so
``ours / peer`` is computed within a sequence and the median of those ratios is reported.
Results go to ``benchmarks/results/end_to_end.json`` (``--quick`` writes nothing unless
``--output`` is given).
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_incremental as incremental
from benchmarks.common import (
    SAMPLE,
    corpus_files,
    default_corpus,
    machine,
    median,
    start_clock,
    table,
    write_json,
)
from benchmarks.e2e_cold import PEERS, peer_class
from benchmarks.e2e_peers import MODEL, TOKENIZER, ModelCounter, changes

STEPS = incremental.STEPS
CHILD, NEW_CHILD = incremental.CHILD, incremental.NEW_CHILD
OURS = ("cli", "engine")
RESPLIT = {True: "yes", False: "**no**", None: "-"}


def plans_yaml(child: int) -> str:
    """bench_incremental's plan, with the children embedded by the model."""
    head, routes = incremental.plans_yaml(child).split("    routes:\n", 1)
    return f"{head}    embedding: {{model: {MODEL}, text: contextual}}\n    routes:\n{routes}"


class Workspace(incremental.Workspace):
    """A copy of the corpus and the embedding plan, shared by one system's steps."""

    def __init__(self, root: Path, corpus: Path) -> None:
        super().__init__(root, corpus)
        self.set_child(CHILD)

    def set_child(self, child: int) -> None:
        self.plans.write_text(plans_yaml(child))
        self.child = child


def _current_texts(db: Path) -> dict[str, str]:
    """Id -> text of the current chunks (parents and children) in one of our stores."""
    import duckdb

    if not db.exists():
        return {}
    with duckdb.connect(str(db), read_only=True) as con:
        return dict(con.execute("SELECT id::VARCHAR, text FROM current_chunks").fetchall())


def _children(db: Path) -> dict[str, Any]:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        n, mean, top = con.execute(
            "SELECT count(*), avg(token_count), max(token_count) FROM current_chunks WHERE level = 0"
        ).fetchone()
    return {"chunks": n, "mean_tokens": round(mean or 0, 1), "largest_tokens": top or 0}


class Cli(incremental.EndToEnd):
    name = "ingest run (end to end)"

    def __init__(self, ws: Workspace, model: ModelCounter) -> None:
        super().__init__(ws)

    def step(self) -> dict[str, Any]:
        before = _current_texts(self.db)
        out = super().step()
        embedded = (out.get("embeddings") or {}).get("texts_embedded")
        after = {"after": _children(self.db)}
        return {**out, "texts_embedded": embedded, **after, **changes(before, _current_texts(self.db))}


class CliBaseline(Cli):
    """``ingest run`` of another commit (``--baseline REV``, a git worktree run with this
    environment's packages): a change measured before and after beside the peers, in one run."""

    code: Path = incremental.ROOT

    def __init__(self, ws: Workspace, model: ModelCounter) -> None:
        if CliBaseline.code == incremental.ROOT:
            raise ImportError("no --baseline REV given")
        super().__init__(ws, model)
        self.name = f"ingest run at {incremental.BASELINE_REV}"


class Engine(incremental.Engine):
    name = "engine run_pending (no Dagster)"

    def __init__(self, ws: Workspace, model: ModelCounter) -> None:
        super().__init__(ws)

    def step(self) -> dict[str, Any]:
        from ingest_assets.engine import IngestEngine
        from ingest_assets.plans import load_plans
        from ingest_assets.store import IngestStore

        plans = load_plans(self.ws.plans)
        incremental.warm_tokenizers(plans)
        before = _current_texts(self.db)
        started = start_clock()
        report = IngestEngine(IngestStore(self.db), self.ws.inbox, plans).run_pending()
        wall = time.perf_counter() - started
        results = [r.total for r in report.chunks.get("embeddings", {}).values()]
        return {
            "seconds": round(wall, 3),
            "texts_embedded": sum(r.texts_embedded for r in results),
            "model_seconds": round(sum(r.embedding_seconds for r in results), 3),
            "chunker_calls": report.chunker_calls,
            "after": _children(self.db),
            **changes(before, _current_texts(self.db)),
        }


def _peer(key: str) -> Any:
    def make(ws: Workspace, model: ModelCounter) -> Any:
        return peer_class(key)(ws, model)

    return make


class ColdPeer:
    """A peer's step in a new Python process (``benchmarks/e2e_cold.py``), timed as ``ingest
    run`` is: interpreter start-up, the library's imports, the model's load, the step and the
    exit (the benchmark's reads of the store around the step left out, as they are for ``ingest
    run``). The same work a user's indexing script does each time it runs; the warm peer (its
    step in this process) leaves the start-up and exit out."""

    def __init__(self, key: str, ws: Workspace) -> None:
        self.key, self.ws = key, ws
        self.name = f"{peer_class(key).name}, new process"  # ImportError: not installed
        self.extra: list[str] = []
        if key == "cocoindex":  # its chunk size in bytes: measured once, outside any clock
            from benchmarks.e2e_cocoindex import _bytes_per_token

            self.extra = [repr(_bytes_per_token(ws.inbox))]
        self.env = {
            **os.environ,
            "PYTHONPATH": str(incremental.ROOT),
            "COCOINDEX_DISABLE_USAGE_TRACKING": "1",
        }

    def step(self) -> dict[str, Any]:
        command = [
            sys.executable,
            "-m",
            "benchmarks.e2e_cold",
            self.key,
            str(self.ws.root),
            str(self.ws.child),
        ]
        start_clock()
        launched = time.time()
        done = subprocess.run(
            [*command, *self.extra], cwd=incremental.ROOT, env=self.env, capture_output=True, text=True
        )
        ended = time.time()
        if done.returncode:
            raise RuntimeError(f"{self.key} in a new process failed: {done.stderr[-2000:]}")
        report = json.loads(done.stdout.strip().splitlines()[-1])
        # Start-up (interpreter, imports, the model's load), the step's own clock and the exit;
        # not the benchmark's reads of the store and token counts around the step.
        start_up, exit_ = report.pop("ready_at") - launched, ended - report.pop("done_at")
        return {
            **report,
            "seconds": round(start_up + report["seconds"] + exit_, 3),
            "in_process_seconds": report["seconds"],
            "start_up_seconds": round(start_up, 3),
            "exit_seconds": round(exit_, 3),
        }


def _cold(key: str) -> Any:
    def make(ws: Workspace, model: ModelCounter) -> Any:
        return ColdPeer(key, ws)

    return make


SYSTEMS: dict[str, Any] = {
    "cli": Cli,
    "cli-baseline": CliBaseline,
    "engine": Engine,
    **{key: _peer(key) for key in PEERS},
    **{f"{key}-cold": _cold(key) for key in PEERS},
}
# Peers in a new process each step (and `ingest run` of another commit): compared with
# `ingest run`, which is one too.
COLD = (*(f"{key}-cold" for key in PEERS), "cli-baseline")


def resplit(results: dict[str, Any]) -> bool | None:
    """Whether the child-size step replaced chunks with smaller ones."""
    step, edit = results.get("child-size", {}), results.get("edit", {})
    if "written" not in step:
        return None
    if not step["written"]:
        return False
    after, before = step.get("after"), edit.get("after")
    if after and before:
        return after["mean_tokens"] < before["mean_tokens"]
    return True


def run_sequence(key: str, corpus: Path, model: ModelCounter) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"bench-e2e-{key}-") as tmp:
        ws = Workspace(Path(tmp), corpus)
        try:
            system = SYSTEMS[key](ws, model)
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
            except Exception as error:  # report it and go on with the other systems
                results[step] = {"error": f"{type(error).__name__}: {str(error)[:800]}"}
                print(f"  {system.name}: {step} failed: {results[step]['error']}", file=sys.stderr)
                break
            shown = {k: results[step].get(k) for k in ("seconds", "texts_embedded", "written", "deleted")}
            print(f"  {system.name}: {step} {shown}", file=sys.stderr, flush=True)
        results["re_split"] = resplit(results)
        return results


def warm_up(keys: list[str], model: ModelCounter) -> None:
    """One full step of every in-process system on two files of the sample, not timed: the
    imports and lazy set-ups a library does on first use stay out of the first sequence, as they
    are out of the later ones. ``ingest run`` pays its own in every step, being a new process."""
    files = corpus_files(SAMPLE)[:2]
    with tempfile.TemporaryDirectory(prefix="bench-e2e-warm-") as tmp:
        corpus = Path(tmp) / "corpus"
        for path in files:
            (corpus / path.name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, corpus / path.name)
        for key in keys:
            if key == "cli" or key in COLD:
                continue
            try:
                SYSTEMS[key](Workspace(Path(tmp) / key, corpus), model).step()
            except Exception as error:  # the timed run reports it
                print(f"  warm-up of {key} failed: {error}", file=sys.stderr)


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One system's sequences: the last one's counts, median seconds, every sequence's seconds."""
    merged = dict(runs[-1])
    for step in STEPS:
        entries = [run.get(step, {}) for run in runs]
        if all("seconds" in entry for entry in entries):
            times = [entry["seconds"] for entry in entries]
            merged[step] = {**merged[step], "seconds": round(median(times), 3), "runs_seconds": times}
    return merged


def ratios(sequences: list[dict[str, dict[str, Any]]], ours: str, peer: str) -> dict[str, Any]:
    """Median over sequences of ours / peer seconds, per step (below 1: ours faster)."""
    out: dict[str, Any] = {}
    for step in STEPS:
        values = []
        for seq in sequences:
            a, b = seq.get(ours, {}).get(step, {}), seq.get(peer, {}).get(step, {})
            if "seconds" in a and b.get("seconds"):
                values.append(a["seconds"] / b["seconds"])
        if values:
            out[step] = {"median": round(median(values), 4), "runs": [round(v, 4) for v in values]}
    return out


def _ratio(entry: dict[str, Any] | None) -> str:
    if not entry:
        return "-"
    value = entry["median"]
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def render(report: dict[str, Any]) -> str:
    rows = []
    for data in report["systems"].values():
        for step in STEPS:
            entry = data.get(step)
            if entry is None:
                continue
            if "error" in entry:
                rows.append([data["name"], step, entry["error"][:100]] + [""] * 7)
                continue
            after = entry.get("after") or entry.get("made") or {}
            sizes = f"{after['chunks']} / {after['mean_tokens']}" if after.get("chunks") else "-"
            rows.append(
                [
                    data["name"],
                    step,
                    f"{entry['seconds']:.2f}",
                    entry.get("texts_embedded", "-"),
                    entry["written"],
                    entry["deleted"],
                    entry["kept"],
                    "-" if entry.get("new_texts") is None else entry["new_texts"],
                    sizes,
                    RESPLIT[data.get("re_split")] if step == STEPS[-1] else "",
                ]
            )
    detail = table(
        [
            "system",
            "step",
            "seconds",
            "texts embedded",
            "written",
            "deleted",
            "kept",
            "new texts",
            "chunks / mean tokens",
            "re-split",
        ],
        rows,
    )
    ratio_rows = []
    for peer, values in report["ratios"].items():
        name = report["systems"][peer]["name"]
        cells = []
        for step in STEPS:
            cli, engine = values.get("cli", {}).get(step), values.get("engine", {}).get(step)
            cells.append(_ratio(cli) if peer in COLD else f"{_ratio(cli)} ({_ratio(engine)})")
        ratio_rows.append([name, *cells])
    ratio_table = table(["ours / peer: `ingest run` (engine)", *STEPS], ratio_rows)
    return f"{detail}\n\n{ratio_table}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="folder of documents (default ../shared/corpus)")
    parser.add_argument("--quick", action="store_true", help="data/sample, one sequence: a smoke run")
    parser.add_argument("--system", action="append", choices=sorted(SYSTEMS), help="repeatable")
    parser.add_argument("--repeat", type=int, help="sequences per system (default 3; 1 with --quick)")
    parser.add_argument("--output", help="file name under benchmarks/results (default end_to_end.json)")
    parser.add_argument(
        "--baseline", metavar="REV", help="also run `ingest run` of this commit (cli-baseline)"
    )
    args = parser.parse_args(argv)
    repeats = args.repeat or (1 if args.quick else 3)
    corpus = args.corpus or default_corpus(args.quick)
    keys = args.system or [key for key in SYSTEMS if key != "cli-baseline" or args.baseline]
    worktree = None
    if args.baseline:
        worktree = Path(tempfile.mkdtemp(prefix="bench-baseline-")) / "code"
        CliBaseline.code = incremental.checkout(args.baseline, worktree)
        incremental.BASELINE_REV = args.baseline
    model = ModelCounter()  # loaded once, before any clock; `ingest run` loads its own
    warm_up(keys, model)
    sequences: list[dict[str, dict[str, Any]]] = []
    try:
        for number in range(repeats):
            print(f"sequence {number + 1} of {repeats}", file=sys.stderr)
            sequences.append({key: run_sequence(key, corpus, model) for key in keys})
    finally:
        if worktree is not None:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(worktree)], cwd=incremental.ROOT, check=False
            )
    report: dict[str, Any] = {
        "benchmark": "end_to_end",
        "machine": machine(),
        "corpus": str(corpus),
        "files": len(corpus_files(corpus)),
        "model": MODEL,
        "settings": {
            "parent": incremental.PARENT,
            "child": CHILD,
            "new_child": NEW_CHILD,
            "tokenizer": TOKENIZER,
        },
        "repeats": repeats,
        "systems": {key: summarise([seq[key] for seq in sequences]) for key in keys},
        "sequences": sequences,
    }
    report["ratios"] = {
        peer: {ours: ratios(sequences, ours, peer) for ours in OURS if peer not in COLD or ours == "cli"}
        for peer in keys
        if peer not in OURS
    }
    text = render(report)
    print(text)
    if not args.quick or args.output:
        path = write_json(args.output or "end_to_end.json", report | {"table": text})
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
