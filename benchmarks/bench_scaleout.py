"""Scale-out: the corpus ingested by 1 and 2 parallel shard processes on a DuckLake store
(Postgres catalog), beside one `ingest run` on the single DuckDB file, at two corpus sizes, in
one run of this script.

    python benchmarks/bench_scaleout.py                         # the shared corpus x3 and x10
    python benchmarks/bench_scaleout.py --copies 3              # x3 only, when time is short
    python benchmarks/bench_scaleout.py --processes 1,2,4       # also 4 processes
    python benchmarks/bench_scaleout.py --copies 3 --repeat 3   # medians of three rounds

Every run starts from an empty store and goes through parse, parent and child chunking and graph
records of every document. Each process uses one worker (INGEST_WORKERS=1), so N processes use N
cores: what the lake gives with N machines is then read off the 1- and 2-process times. The 8
shards are dealt out by their bytes, each process a range of consecutive shards (one run of each
job: ``ingest shards``), each with a Dagster home of its own.

The serial share f is measured directly (the seconds one process spent waiting for write locks
or holding the store lock alone, over its time) and estimated from the speedup S(P) = T(1) /
T(P) (Karp-Flatt: f = (1/S - 1/P) / (1 - 1/P)); Amdahl's law with the larger of the two gives
what N machines would: 1 / (f + (1 - f)/N). On a machine with C cores, runs of P > C processes
share cores: their times measure the overhead of more writers, not more machines.

Two more bounds say why a speedup falls short of P: the CPU the machine spent in each
configuration (``/proc/stat``; ``cores_busy`` is that over the wall time), and the fixed cost of
one process over no files (``fixed_per_process``), which every process pays whatever its share.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import ROOT, corpus_files, default_corpus
from chunking import Document
from ingest_assets.engine import SHARDS, shard_of
from ingest_assets.inbox import walk_inbox

SCRIPT = ROOT / "scripts" / "local_postgres.sh"


def _inbox(root: Path, corpus: Path, copies: int) -> Path:
    inbox = root / "inbox"
    for copy in range(copies):
        for path in corpus_files(corpus):
            target = inbox / f"copy{copy:02d}" / path.relative_to(corpus)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return inbox


def _env(root: Path, name: str, extra: dict[str, str]) -> dict[str, str]:
    home = root / "homes" / name
    home.mkdir(parents=True)
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    return {**os.environ, "PYTHONPATH": str(ROOT), "DAGSTER_HOME": str(home), "INGEST_WORKERS": "1",
            "DAGSTER_TELEMETRY_DISABLED": "1", **extra}  # fmt: skip


def _busy_cpu_seconds() -> float:
    """CPU seconds this machine has spent busy since boot, all cores (``/proc/stat``: user,
    nice, system, irq and softirq; not idle, iowait or a hypervisor's steal). Over a run on a
    quiet machine, its difference is the CPU the run took everywhere: its processes, their
    workers, and the Postgres server."""
    user, nice, system, _idle, _iowait, irq, softirq = (
        int(v) for v in Path("/proc/stat").read_text().split(maxsplit=8)[1:8]
    )
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _timed(commands: list[tuple[list[str], dict[str, str]]]) -> tuple[float, list[str], float]:
    """Run the commands at once; the seconds until the last ended, their outputs, and the CPU
    seconds the machine was busy meanwhile."""
    busy = _busy_cpu_seconds()
    started = time.perf_counter()
    procs = [subprocess.Popen(a, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for a, e in commands]  # fmt: skip
    outputs = [p.communicate() for p in procs]
    elapsed = time.perf_counter() - started
    busy = _busy_cpu_seconds() - busy
    for proc, (_, err) in zip(procs, outputs, strict=True):
        if proc.returncode:
            raise SystemExit(f"a run failed:\n{err[-3000:]}")
    return elapsed, [out for out, _ in outputs], busy


def _lock_times(outputs: list[str]) -> dict[str, float]:
    """The shard processes' write-lock figures, summed: seconds waited for locks, held alone
    (whole-store transactions), held beside other shards' writers, and their sum ``serial``
    (waited + alone: the part of the work more writers cannot speed up)."""
    reports = [json.loads(out.strip().splitlines()[-1])["write_lock"] for out in outputs]
    return {
        name: round(sum(r[name] for r in reports), 2) for name in ("waited", "exclusive", "shared", "serial")
    } | {"taken": sum(r["taken"] for r in reports)}


def _shard_bytes(inbox: Path) -> dict[str, int]:
    """Bytes of source in each shard."""
    sizes = dict.fromkeys(SHARDS, 0)
    for found in walk_inbox(inbox).files:
        sizes[shard_of(Document.node_id_for(found.uri))] += found.stat.st_size
    return sizes


def _groups(inbox: Path, count: int) -> list[list[str]]:
    """The 8 shards dealt to ``count`` processes as a scheduler that knows the files would: each
    process a range of consecutive shards, so one run of each job (a backfill split into runs of
    consecutive shards does the same), the ranges chosen to even out the bytes each process
    parses and chunks."""
    sizes = _shard_bytes(inbox)
    n = len(SHARDS)
    best: tuple[int, list[list[str]]] | None = None
    for cuts in itertools.combinations(range(1, n), count - 1):
        bounds = [0, *cuts, n]
        ranges = [list(SHARDS[bounds[i] : bounds[i + 1]]) for i in range(count)]
        heaviest = max(sum(sizes[s] for s in shards) for shards in ranges)
        if best is None or heaviest < best[0]:
            best = (heaviest, ranges)
    assert best is not None
    return best[1]


def _processes(name: str) -> int:
    """The number of processes in a configuration's name ("lake, 2 processes": 2)."""
    return int(name.split(", ")[1].split()[0])


def _new_lake(pg: dict[str, str], root: Path, name: str) -> dict[str, str]:
    conninfo = f"host={pg['PGHOST']} port={pg['PGPORT']} user={pg['PGUSER']}"
    subprocess.run(["psql", "-q", "-d", f"dbname=postgres {conninfo}", "-c", f"CREATE DATABASE {name}"],
                   check=True, capture_output=True)  # fmt: skip
    data = root / f"data_{name}"
    data.mkdir()
    return {"INGEST_STORE": f"ducklake:postgres:dbname={name} {conninfo}", "INGEST_LAKE_DATA": str(data)}


def _one_size(
    root: Path, pg: dict[str, str], corpus: Path, copies: int, processes: str, repeat: int
) -> dict[str, Any]:
    """The file and 1, 2, ... lake processes over the corpus ``copies`` times, ``repeat``
    rounds (each configuration once a round, every store new), and the figures: each
    configuration's median round."""
    root.mkdir()
    inbox = _inbox(root, corpus, copies)
    plans = root / "plans.yaml"
    shutil.copyfile(ROOT / "plans.yaml", plans)
    common = {"INGEST_INBOX": str(inbox), "INGEST_PLANS": str(plans)}
    files = len(list(p for p in inbox.rglob("*") if p.is_file()))
    rounds: dict[str, list[float]] = {}
    locks_by_round: dict[str, list[dict[str, float]]] = {}
    cpu: dict[str, list[float]] = {}
    fixed: list[tuple[float, float]] = []
    counts = [int(p) for p in processes.split(",")]
    groups_used = {str(count): _groups(inbox, count) for count in counts}
    cli = [sys.executable, "-m", "ingest_assets.cli", "run"]
    shards = [sys.executable, "-m", "ingest_assets.cli", "shards"]
    for round_ in range(repeat):
        store = {**common, "INGEST_DUCKDB": str(root / f"i{round_}.duckdb")}
        seconds, _, busy = _timed([(cli, _env(root, f"file-{round_}", store))])
        rounds.setdefault("file, 1 process", []).append(seconds)
        cpu.setdefault("file, 1 process", []).append(busy)
        for count in counts:
            lake = _new_lake(pg, root, f"lake{copies}x{count}r{round_}")
            commands = [
                ([*shards, *group],
                 _env(root, f"lake{count}-{i}-{round_}", {**common, **lake}))
                for i, group in enumerate(groups_used[str(count)])
            ]  # fmt: skip
            name = f"lake, {count} process{'es' if count > 1 else ''}"
            seconds, outputs, busy = _timed(commands)
            rounds.setdefault(name, []).append(seconds)
            cpu.setdefault(name, []).append(busy)
            locks_by_round.setdefault(name, []).append(_lock_times(outputs))
        # What a process costs whatever its share: the same command over no files (start-up,
        # the lake's catalog and schema, plan registration, two Dagster runs, their checks).
        empty = root / f"empty{round_}"
        empty.mkdir()
        lake = _new_lake(pg, root, f"lake{copies}empty{round_}")
        alone = _env(root, f"empty-{round_}", {**common, **lake, "INGEST_INBOX": str(empty)})
        seconds, _, busy = _timed([(shards, alone)])
        fixed.append((seconds, busy))
    figures = {name: statistics.median(times) for name, times in rounds.items()}
    # Each configuration's median round (the round nearest its median), whose lock and CPU
    # figures are reported.
    median_round = {
        name: min(range(len(times)), key=lambda i, n=name: abs(rounds[n][i] - figures[n]))
        for name, times in rounds.items()
    }
    locks = {name: runs[median_round[name]] for name, runs in locks_by_round.items()}
    one = figures["lake, 1 process"]
    report: dict[str, Any] = {
        "files": files,
        "copies": copies,
        "seconds": {k: round(v, 1) for k, v in figures.items()},
        "rounds": {k: [round(t, 1) for t in v] for k, v in rounds.items()},
        "shards_per_process": groups_used,
    }
    # The busiest process's share of the bytes: with whole shards dealt as ranges, the work is
    # split no finer than this, so ``count`` processes are at most 1 / share as fast as one
    # (where time follows bytes), whatever the store does.
    sizes = _shard_bytes(inbox)
    total = sum(sizes.values()) or 1
    shares = {
        count: max(sum(sizes[s] for s in group) for group in groups) / total
        for count, groups in groups_used.items()
    }
    report["busiest_share_of_bytes"] = {count: round(share, 3) for count, share in shares.items()}
    report["speedup_bound_by_balance"] = {count: round(1 / share, 2) for count, share in shares.items()}
    fractions = {}
    for name, seconds in figures.items():
        count = _processes(name)
        if name.startswith("lake") and count > 1:
            speedup = one / seconds
            fractions[count] = (1 / speedup - 1 / count) / (1 - 1 / count)
    report["write_lock"] = locks
    # The CPU the machine spent in each configuration's median round, and how many cores that
    # kept busy. A speedup is the product of two ratios: CPU seconds (one process's over the
    # split work's, below 1 where each process repeats fixed work) and cores busy (the split
    # work's over one process's). With C cores, P processes are at most
    # (CPU ratio) * C / (one process's cores busy) as fast as one: a single process that already
    # keeps more than one core busy (its worker beside its own writes, Postgres) leaves less
    # for the others to add.
    cpu_seconds = {name: cpu[name][i] for name, i in median_round.items()}
    cores_busy = {name: cpu_seconds[name] / rounds[name][i] for name, i in median_round.items()}
    cores = len(os.sched_getaffinity(0))
    report["cpu_seconds"] = {name: round(v, 1) for name, v in cpu_seconds.items()}
    report["cores_busy"] = {name: round(v, 2) for name, v in cores_busy.items()}
    one_cpu, one_busy = cpu_seconds["lake, 1 process"], cores_busy["lake, 1 process"]
    report["speedup_bound_by_cores"] = {
        name: round(one_cpu / cpu_seconds[name] * min(cores, _processes(name)) / one_busy, 2)
        for name in figures
        if name.startswith("lake") and _processes(name) > 1
    }
    # Paid by every process whatever its share, so P processes are at most
    # T(1) / ((T(1) - F) / P + F) as fast as one (F: the median fixed seconds), on P machines
    # as on P cores: a duplicated cost limits a speedup exactly as a serial one does.
    fixed_seconds = statistics.median(seconds for seconds, _ in fixed)
    report["fixed_per_process"] = {
        "seconds": round(fixed_seconds, 1),
        "cpu_seconds": round(statistics.median(cpu_used for _, cpu_used in fixed), 1),
    }
    report["speedup_bound_by_fixed_cost"] = {
        str(count): round(one / ((one - fixed_seconds) / count + fixed_seconds), 2)
        for count in counts
        if count > 1
    }
    # Measured directly: the share of one process's time spent in anything serialized.
    report["serial_share_measured"] = round(locks["lake, 1 process"]["serial"] / one, 4)
    report["speedup_vs_lake_1"] = {name: round(one / s, 2) for name, s in figures.items()}
    report["lake_1_vs_file"] = round(one / figures["file, 1 process"], 2)
    report["serial_fraction_karp_flatt"] = {str(k): round(v, 3) for k, v in fractions.items()}
    f = max(report["serial_share_measured"], max(0.0, min(1.0, fractions.get(2, 0.0))))
    report["amdahl_with_f"] = round(f, 3)
    report["amdahl"] = {str(n): round(1 / (f + (1 - f) / n), 2) for n in (1, 2, 4, 8, 16)}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", default="3,10", help="corpus sizes, comma-separated")
    parser.add_argument("--processes", default="1,2")
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds of every configuration; the median is reported"
    )
    args = parser.parse_args()
    corpus = default_corpus()
    # One folder, the same every run: a document's shard follows its path, so a new folder each
    # time would deal the same corpus out to the processes differently from run to run.
    root = Path(tempfile.gettempdir()) / "bench-scaleout"
    if root.exists():  # left by a run that was stopped: its Postgres may still be up
        subprocess.run(["bash", str(SCRIPT), "stop", str(root / "pg")], capture_output=True)
        shutil.rmtree(root)
    root.mkdir()
    os.chmod(root, 0o755)
    started = subprocess.run(["bash", str(SCRIPT), "start", str(root / "pg")], capture_output=True, text=True)
    if started.returncode:
        raise SystemExit(started.stderr)
    pg = dict(
        item.split("=", 1)
        for line in started.stdout.splitlines()
        if line.startswith("export PG")
        for item in line[len("export ") :].split()
    )
    try:
        report = {"cores": len(os.sched_getaffinity(0))}
        for copies in (int(c) for c in args.copies.split(",")):
            report[f"x{copies}"] = _one_size(
                root / f"x{copies}", pg, corpus, copies, args.processes, args.repeat
            )
        print(json.dumps(report, indent=2))
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(root / "pg")], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
