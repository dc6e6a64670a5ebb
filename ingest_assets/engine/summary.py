"""The summary of a run (what ``ingest run`` prints), read from the store's own records.

Every step call records its result per shard in ``step_results`` under the run's id (Dagster's
run id inside a Dagster run, a ``local-...`` id for the engine's own driver). A summary adds up
the records of the runs a caller launched, counts the shards that had no work as the pending
check found them (their files unchanged, their sets reused) and reads the current views. No
Dagster metadata is read back: ``ingest run``, ``ingest shards`` and the engine's driver get
the same figures from the same rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chunking import Document
from ingest_assets.engine.keys import SHARDS, shard_of
from ingest_assets.engine.pending import Pending
from ingest_assets.engine.results import RESULT_OF_STEP, StepResult, combined, from_counts
from ingest_assets.store import IngestStore
from ingest_assets.store.step_results import recorded_step_results

__all__ = [
    "CurrentCounts",
    "DocumentCounts",
    "EmbeddingCounts",
    "Failure",
    "RunSummary",
    "SetCounts",
    "SourceCounts",
    "read_step_results",
]

# The rows of the current views, in CurrentCounts' order: their sizes from what each live plan
# serves (one row a document) and the counts its sets keep, since counting current_chunks and
# graph_nodes would read every served chunk and node, a cost that grows with the store.
_CURRENT = (
    "SELECT (SELECT count(*) FROM current_documents), served.chunks, served.nodes, "
    "(SELECT count(*) FROM ingest_failures) FROM (SELECT coalesce(sum(p.chunk_count + c.chunk_count), 0) "
    "AS chunks, coalesce(sum(g.node_count), 0) AS nodes FROM promoted r "
    "JOIN chunk_sets p ON p.set_key = r.parent_set JOIN chunk_sets c ON c.set_key = r.child_set "
    "JOIN graph_sets g ON g.set_key = r.graph_set WHERE r.state = 'live') served"
)


def read_step_results(store: IngestStore, run_ids: Sequence[str]) -> dict[str, dict[str | None, Any]]:
    """What the runs ``run_ids`` recorded, each step's shards added up: by step, then by plan
    key (None for the document steps), a typed result (see :func:`~.results.combined`)."""
    found: dict[str, dict[str | None, list[StepResult]]] = {}
    for record in recorded_step_results(store, run_ids):
        kind = RESULT_OF_STEP.get(record.step)
        if kind is not None:
            found.setdefault(record.step, {}).setdefault(record.plan_key, []).append(
                from_counts(kind, record.counts)
            )
    return {
        step: {plan: combined(results, RESULT_OF_STEP[step]()) for plan, results in by_plan.items()}
        for step, by_plan in found.items()
    }


@dataclass(frozen=True)
class DocumentCounts:
    """Current sources parsed now, left unchanged or failed; files found deleted."""

    parsed: int = 0
    unchanged: int = 0
    failed: int = 0
    deleted: int = 0


@dataclass(frozen=True)
class SourceCounts:
    """Inbox files: ``new + changed + unchanged == files``; ``deleted`` known and gone."""

    files: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0


@dataclass(frozen=True)
class SetCounts:
    """Sets made now, and sets found stored already (by every plan)."""

    created: int = 0
    reused: int = 0


@dataclass(frozen=True)
class EmbeddingCounts:
    """Child sets embedded now or before; distinct texts sent to a model or found stored."""

    sets_embedded: int = 0
    sets_reused: int = 0
    texts_embedded: int = 0
    texts_reused: int = 0


@dataclass(frozen=True)
class CurrentCounts:
    """Rows of the current views after the run."""

    documents: int = 0
    chunks: int = 0
    graph_nodes: int = 0
    failures: int = 0


# How many of the files still failing from earlier runs a summary names.
STILL_FAILING_SHOWN = 10
# ingest_failures' stages as the steps that record them.
_STEP_OF_STAGE = {
    "parse": "documents",
    "parent": "parent_chunks",
    "child": "child_chunks",
    "graph": "graph_nodes",
}


def still_failing(
    store: IngestStore, since: datetime, shards: Sequence[str] | None = None
) -> tuple[tuple[Failure, ...], int]:
    """The files failing since before ``since`` (rows of ``ingest_failures`` recorded earlier,
    which no run tries again until their file changes), of ``shards`` (default all): the first
    :data:`STILL_FAILING_SHOWN`, and how many in all."""
    rows = store.query(
        'SELECT source_uri, stage, plan_key, error FROM ingest_failures WHERE "at" < ? '
        "ORDER BY source_uri, stage, plan_key",
        [since],
    )
    if shards is not None:
        wanted = set(shards)
        rows = [row for row in rows if shard_of(Document.node_id_for(row[0])) in wanted]
    shown = tuple(
        Failure(uri, _STEP_OF_STAGE.get(stage, stage), plan, message)
        for uri, stage, plan, message in rows[:STILL_FAILING_SHOWN]
    )
    return shown, len(rows)


def _still_failing_fields(store: IngestStore, since: datetime | None, failing: int) -> dict[str, Any]:
    """A summary's ``still_failing`` fields (none when no file fails, ``failing`` being how
    many rows ``ingest_failures`` has, or no start time is known)."""
    if failing == 0 or since is None:
        return {}
    shown, count = still_failing(store, since)
    return {"still_failing": shown, "still_failing_count": count}


# The steps whose failures a summary names, in the order a document goes through them.
_FAILING_STEPS = ("documents", "parent_chunks", "child_chunks", "graph_nodes")


@dataclass(frozen=True)
class Failure:
    """A file a step of the run failed on: ``step`` the asset, ``plan`` its plan key (None for
    parsing), ``message`` what went wrong and the fix, as ``ingest_failures`` records it."""

    uri: str
    step: str
    plan: str | None
    message: str

    def line(self) -> str:
        """The message (which names the file), after the step and plan where the failure was
        not parsing."""
        return self.message if self.plan is None else f"{self.step} under {self.plan}: {self.message}"


@dataclass(frozen=True)
class RunSummary:
    """One ``ingest run``: what its runs did over every shard and plan, and the views after it.

    :meth:`to_json` is what ``ingest run --json`` prints; :meth:`lines` what it prints as text.
    """

    documents: DocumentCounts
    sources: SourceCounts
    parent_sets: SetCounts
    child_sets: SetCounts
    graph_sets: SetCounts
    chunk_failures: int
    chunker_calls: int
    embeddings: EmbeddingCounts
    plans: tuple[str, ...]
    runs: int
    current: CurrentCounts
    # The Dagster runs these were, in launch order (what ``ingest changes --run`` takes).
    run_ids: tuple[str, ...] = ()
    database: str = ""
    wall_seconds: float = 0.0
    # The inbox entries the scan skipped, ``path: why`` (Pending.skipped).
    skipped: tuple[str, ...] = ()
    # The files the runs failed on, the first FAILURES_RECORDED of each step and shard; all of
    # them number ``failed_count`` (the rest are in ingest_failures).
    failures: tuple[Failure, ...] = ()
    failed_count: int = 0
    # The files still failing from earlier runs (in ingest_failures, their content unchanged
    # since, so these runs did not try them again), the first STILL_FAILING_SHOWN; all of them
    # number ``still_failing_count``.
    still_failing: tuple[Failure, ...] = ()
    still_failing_count: int = 0
    # The error-severity checks the runs failed, a line each (Launcher.failed_checks).
    failed_checks: tuple[str, ...] = ()

    @classmethod
    def of_runs(
        cls,
        store: IngestStore,
        run_ids: Sequence[str],
        pending: Pending,
        plan_keys: Sequence[str],
        *,
        runs: int,
        database: str = "",
        wall_seconds: float = 0.0,
        failed_checks: Sequence[str] = (),
        since: datetime | None = None,
    ) -> RunSummary:
        """The summary of the runs ``run_ids`` launched for ``pending`` (read before them; its
        shards without work count as unchanged and reused) over the plans ``plan_keys``; the
        failures recorded before ``since`` (when the runs started) are the files still failing."""
        done = read_step_results(store, run_ids)

        def total(step: str) -> Any:
            return combined(done.get(step, {}).values(), RESULT_OF_STEP[step]())

        scan, parse = total("sources"), total("documents")
        parents, children = total("parent_chunks"), total("child_chunks")
        graphs, vectors = total("graph_nodes"), total("embeddings")
        idle = [pending.idle[shard] for shard in SHARDS if shard not in pending.documents]
        reused = {"parent": 0, "child": 0, "graph": 0, "embedded": 0}
        for key in plan_keys:
            for shard in sorted(set(SHARDS) - set(pending.chunks.get(key, []))):
                for role, count in pending.idle[shard].reused.get(key, {}).items():
                    reused[role] += count
        (current,) = store.query(_CURRENT)
        failures = tuple(
            Failure(failed.source_uri, step, plan, failed.message)
            for step in _FAILING_STEPS
            for plan, result in sorted(done.get(step, {}).items(), key=lambda item: item[0] or "")
            for failed in result.failures
        )
        return cls(
            documents=DocumentCounts(
                parse.parsed, parse.unchanged + sum(s.unchanged for s in idle), parse.failed, scan.deleted
            ),
            sources=SourceCounts(
                files=scan.files + sum(s.files for s in idle),
                new=scan.new,
                changed=scan.changed,
                unchanged=scan.unchanged + sum(s.files for s in idle),
                deleted=scan.deleted,
            ),
            parent_sets=SetCounts(parents.created, parents.reused + reused["parent"]),
            child_sets=SetCounts(children.created, children.reused + reused["child"]),
            graph_sets=SetCounts(graphs.created, graphs.reused + reused["graph"]),
            chunk_failures=parents.failed + children.failed,
            chunker_calls=parents.chunker_calls + children.chunker_calls,
            embeddings=EmbeddingCounts(
                vectors.sets_embedded,
                vectors.sets_reused + reused["embedded"],
                vectors.texts_embedded,
                vectors.texts_reused,
            ),
            plans=tuple(plan_keys),
            runs=runs,
            current=CurrentCounts(*current),
            run_ids=tuple(run_ids),
            database=database,
            wall_seconds=wall_seconds,
            skipped=tuple(pending.skipped),
            failures=failures,
            failed_count=parse.failed + parents.failed + children.failed + graphs.failed,
            **_still_failing_fields(store, since, current[-1]),
            failed_checks=tuple(failed_checks),
        )

    def to_json(self) -> dict[str, Any]:
        """The summary as ``ingest run --json`` prints it (the keys it always had, ``skipped``:
        the inbox entries the scan skipped, and ``failures``: the files the runs failed on, each
        with its step, plan and message, the first of each step and shard; ``run_ids``: the
        Dagster runs, in launch order; ``still_failing``
        and ``still_failing_count``: the files failing since earlier runs; ``failed_checks``:
        the error-severity checks that failed, a line each)."""
        return {
            "documents": dataclasses.asdict(self.documents),
            "sources": dataclasses.asdict(self.sources),
            "chunk_sets": {
                "parent": dataclasses.asdict(self.parent_sets),
                "child": dataclasses.asdict(self.child_sets),
            },
            "graph_sets": dataclasses.asdict(self.graph_sets),
            "chunk_failures": self.chunk_failures,
            "chunker_calls": self.chunker_calls,
            "embeddings": dataclasses.asdict(self.embeddings),
            "plans": list(self.plans),
            "runs": self.runs,
            "run_ids": list(self.run_ids),
            "current": dataclasses.asdict(self.current),
            "database": self.database,
            "wall_seconds": self.wall_seconds,
            "skipped": list(self.skipped),
            "failures": [dataclasses.asdict(failure) for failure in self.failures],
            "still_failing": [dataclasses.asdict(failure) for failure in self.still_failing],
            "still_failing_count": self.still_failing_count,
            "failed_checks": list(self.failed_checks),
        }

    def lines(self) -> list[str]:
        """The summary as ``ingest run`` prints it on a terminal."""
        d, e, now = self.documents, self.embeddings, self.current
        return [
            f"documents: {d.parsed} parsed, {d.unchanged} unchanged, {d.failed} failed, {d.deleted} deleted",
            *(
                f"{role} chunk sets: {sets.created} created, {sets.reused} reused"
                for role, sets in (("parent", self.parent_sets), ("child", self.child_sets))
            ),
            f"embedding sets: {e.sets_embedded} created, {e.sets_reused} reused "
            f"({e.texts_embedded} texts embedded, {e.texts_reused} found stored)",
            f"current view: {now.documents} documents, {now.chunks} chunks, {now.graph_nodes} graph nodes, "
            f"{now.failures} failures (query ingest_failures)",
            f"plans: {', '.join(self.plans)}",
            *(
                [f"runs: {', '.join(self.run_ids)} (ingest changes --run RUN lists one's chunks)"]
                if self.run_ids
                else []
            ),
            f"store: {self.database}  ({self.wall_seconds} s)",
        ]
