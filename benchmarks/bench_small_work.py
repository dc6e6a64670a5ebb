"""Small work as the store grows: no-op and one-file edit of ``ingest run`` on the corpus x1 and xN.

Run from the project root::

    python benchmarks/bench_small_work.py --copies 3             # x1 and x3
    python benchmarks/bench_small_work.py --copies 10 --repeat 5 # x1 and x10
    python benchmarks/bench_small_work.py --quick                # data/sample x1 and x2, writes nothing

For each size (the corpus copied ``N`` times into ``copyNN/`` folders, so every copy is its own
set of documents) one workspace goes through the sequence of ``bench_incremental.py`` with the
same plan: a full run from nothing, then ``--repeat`` no-ops and ``--repeat`` edits (one
paragraph appended to the same Markdown file each time, the middle one in name order of the
first copy), then the child size 256 -> 200. The sizes take each step in turn (x1, xN, x1,
...), so the load other work puts on the VM drifts over both alike. Each step is ``ingest run
--json`` in a child process (Python start-up, imports, the Dagster runs: what a user waits
for); no-op and edit are the medians of their repeats. The table puts x1 and xN side by side
with their ratio: small work stays small when the ratio stays near 1 (the target: within
1.2x).

``--baseline REV`` runs the same sequence with the code of commit REV (a git worktree of it),
its steps in turn with this checkout's, on their own copies.

``--profile`` adds one more no-op and one more edit per size under cProfile and breaks their
time down (imports, the pending check, Dagster's instance and definitions, each run, the
summary; within the runs, the steps' own work, the asset checks and Dagster's event storage).
cProfile slows Python code more than DuckDB's or SQLite's, so read the breakdown as shares.
The ``dagster_runs`` column counts the runs each step launched, read from the instance.

Results go to ``benchmarks/results/small_work.json``, with the load average before and after
each size: this VM's 2 cores are shared, and a figure means little without the load beside it.
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_incremental import NEW_CHILD, EndToEnd, Workspace, checkout
from benchmarks.common import ROOT, corpus_files, default_corpus, machine, median, table, write_json

# What a profile's time is split into: label -> (file suffix, the functions' names).
CHECKS = ("_contract", "edges_resolve", "coverage", "vector_coverage", "parse_failures", "chunk_failures")
PHASES = {
    "pending check": ("ingest_assets/engine/__init__.py", "pending"),
    "Dagster instance and definitions": ("ingest_assets/defs/launch.py", "__init__"),
    "runs (execute_in_process)": ("ingest_assets/defs/launch.py", "execute"),
    "  of which the steps' work": ("ingest_assets/defs/assets.py", "_materialize"),
    "  of which the asset checks": ("ingest_assets/defs/checks.py", CHECKS),
    "  of which Dagster's event storage": (
        "dagster/_core/instance/methods/event_methods.py",
        "handle_new_event",
    ),
    "summary": ("ingest_assets/engine/summary.py", "of_runs"),
}


class CopiedWorkspace(Workspace):
    """The corpus copied ``copies`` times (``copyNN/...``) and the benchmark's plans file."""

    def __init__(self, root: Path, corpus: Path, copies: int) -> None:
        copied, documents = root / "corpus", set(corpus_files(corpus))

        def skip(folder: str, names: list[str]) -> list[str]:  # what bench_incremental skips too
            return [n for n in names if Path(folder, n).is_file() and Path(folder, n) not in documents]

        for copy in range(copies):
            shutil.copytree(corpus, copied / f"copy{copy:02d}", ignore=skip)
        super().__init__(root, copied)
        shutil.rmtree(copied)

    def edit_one(self) -> Path:
        """Append a paragraph to the middle Markdown file of the first copy (the same file each time)."""
        markdown = sorted((self.inbox / "copy00").rglob("*.md"))
        target = markdown[len(markdown) // 2]
        with target.open("a", encoding="utf-8") as handle:
            handle.write("\n\nAn appended paragraph: the benchmark edits one file and nothing else.\n")
        return target


def load() -> str:
    """The load averages (1, 5, 15 minutes)."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def dagster_runs(home: Path) -> int:
    """How many runs the instance under ``home`` holds (read from its run storage, in a child
    process so this one never imports Dagster)."""
    code = (
        "from dagster import DagsterInstance; from dagster._core.instance.ref import InstanceRef;"
        f"print(DagsterInstance.from_ref(InstanceRef.from_dir({str(home)!r})).get_runs_count())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return int(done.stdout.strip())


class Measured(EndToEnd):
    """``ingest run`` in a child process (of the checkout ``code``), counting the Dagster runs
    each step launched."""

    def __init__(self, ws: Workspace, code: Path = ROOT) -> None:
        self.code = code
        super().__init__(ws)
        self.home = Path(self.env["DAGSTER_HOME"])

    def step(self) -> dict[str, Any]:
        before = dagster_runs(self.home)
        result = super().step()
        return {**result, "dagster_runs": dagster_runs(self.home) - before}

    def profiled(self, out: Path) -> dict[str, float]:
        """One ``ingest run`` under cProfile: seconds per phase (see :data:`PHASES`), by cProfile's clock."""
        where = ["--inbox", str(self.ws.inbox), "--db", str(self.db), "--plans", str(self.ws.plans)]
        profiler = [sys.executable, "-m", "cProfile", "-o", str(out)]
        command = [*profiler, "-m", "ingest_assets.cli", "run", *where, "--json"]
        subprocess.run(command, cwd=self.code, env=self.env, capture_output=True, check=True)
        stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
        total = max(ct for (_, _, _, ct, _) in stats.values())  # the program's top frame
        main = sum(
            ct
            for (file, _, name), (_, _, _, ct, _) in stats.items()
            if file.endswith("ingest_assets/cli/parser.py") and name == "main"
        )
        phases = {"total (profiled)": total, "start-up and imports before main": total - main}
        for label, (suffix, functions) in PHASES.items():
            phases[label] = sum(
                ct
                for (file, _, name), (_, _, _, ct, _) in stats.items()
                if file.endswith(suffix)
                and name in ((functions,) if isinstance(functions, str) else functions)
            )
        return {label: round(seconds, 3) for label, seconds in phases.items()}


def run_sizes(
    corpus: Path, sizes: list[int], repeat: int, profile: bool, codes: dict[str, Path]
) -> dict[str, list[dict[str, Any]]]:
    """The sequence at each of ``sizes`` (copies) for each checkout of ``codes`` (label ->
    folder), each pair on its own copy, step by step in turn (x1 A, x1 B, x3 A, x3 B, x1 A,
    ...): the load this VM's neighbours put on it drifts over minutes, and alternating shares
    the drift between the sizes and checkouts compared. Returns each label's results by size."""
    with tempfile.TemporaryDirectory(prefix="bench-small-") as tmp:
        systems, results = {}, {}
        for copies in sizes:
            for label, code in codes.items():
                ws = CopiedWorkspace(Path(tmp) / f"{label}-{copies}", corpus, copies)
                systems[(label, copies)] = (ws, Measured(ws, code))
                files = len([p for p in ws.inbox.rglob("*") if p.is_file()])
                results[(label, copies)] = {"copies": copies, "files": files, "load_before": load()}

        def each(step: str, before: Callable[[Workspace], Any] | None = None) -> dict[Any, dict[str, Any]]:
            done = {}
            for (label, copies), (ws, system) in systems.items():
                if before is not None:
                    before(ws)
                done[(label, copies)] = system.step()
                print(f"  {label} x{copies}: {step} {done[(label, copies)]['seconds']} s", file=sys.stderr)
            return done

        for key, entry in each("full").items():
            results[key]["full"] = entry
        for step in ("noop", "edit"):
            runs = [each(step, (lambda ws: ws.edit_one()) if step == "edit" else None) for _ in range(repeat)]
            for key in systems:
                mine = [r[key] for r in runs]
                results[key][step] = {
                    **mine[-1],
                    "seconds": round(median([r["seconds"] for r in mine]), 3),
                    "runs_seconds": [r["seconds"] for r in mine],
                }
        if profile:  # this checkout's, at each size
            for (label, copies), (ws, system) in systems.items():
                if label == next(iter(codes)):
                    found = {"noop": system.profiled(Path(tmp) / "noop.prof")}
                    ws.edit_one()
                    found["edit"] = system.profiled(Path(tmp) / "edit.prof")
                    results[(label, copies)]["profile"] = found
        for key, entry in each("child-size", lambda ws: ws.set_child(NEW_CHILD)).items():
            results[key]["child-size"] = entry
            results[key]["load_after"] = load()
        return {label: [results[(label, copies)] for copies in sizes] for label in codes}


def render(sizes: list[dict[str, Any]]) -> str:
    small, large = sizes[0], sizes[-1]
    rows = []
    for step in ("full", "noop", "edit", "child-size"):
        a, b = small[step], large[step]
        rows.append(
            [
                step,
                f"{a['seconds']:.2f}",
                f"{b['seconds']:.2f}",
                f"{b['seconds'] / a['seconds']:.2f}x",
                f"{a['dagster_runs']} / {b['dagster_runs']}",
                f"{a['written']} / {b['written']}",
            ]
        )
    head = [
        "step",
        f"x{small['copies']} ({small['files']} files) s",
        f"x{large['copies']} ({large['files']} files) s",
        "ratio",
        "Dagster runs",
        "chunk ids written",
    ]
    text = table(head, rows)
    for size in sizes:
        text += f"\nx{size['copies']}: load {size['load_before']} before, {size['load_after']} after"
    if "profile" in small:
        labels = list(small["profile"]["edit"])
        prof = [
            [
                label,
                *(f"{s['profile'][step][label]:.2f}" for s in (small, large) for step in ("noop", "edit")),
            ]
            for label in labels
        ]
        cols = [f"x{s['copies']} {step}" for s in (small, large) for step in ("noop", "edit")]
        text += "\n\nProfile (cProfile seconds)\n" + table(["phase", *cols], prof)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="folder of documents (default ../shared/corpus)")
    parser.add_argument("--copies", type=int, help="the large size (default 3; 2 with --quick)")
    parser.add_argument("--repeat", type=int, default=3, help="no-ops and edits per size (median)")
    parser.add_argument("--profile", action="store_true", help="break a no-op and an edit down")
    parser.add_argument("--quick", action="store_true", help="data/sample: a smoke test, writes nothing")
    parser.add_argument("--output", default="small_work.json", help="file name under benchmarks/results")
    parser.add_argument("--baseline", metavar="REV", help="also measure the ingest run of this commit")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus(args.quick)
    copies = args.copies or (2 if args.quick else 3)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    codes = {"this checkout": ROOT}
    folder = Path(tempfile.mkdtemp(prefix="bench-baseline-")) / "code"
    try:
        if args.baseline:  # the same sequence with another commit's code (a git worktree of it)
            codes[args.baseline] = checkout(args.baseline, folder)
        sizes = run_sizes(corpus, [1, copies], args.repeat, args.profile, codes)
    finally:
        if args.baseline:
            subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT, check=False)
    text = "\n\n".join(f"{label}\n{render(found)}" for label, found in sizes.items())
    print(text)
    report = {
        "benchmark": "small_work",
        "started": started,
        "machine": machine(),
        "corpus": str(corpus),
        "repeat": args.repeat,
        "baseline": args.baseline,
        "sizes": sizes,
        "table": text,
    }
    if not args.quick:
        print(f"wrote {write_json(args.output, report)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
