"""The incremental engine: the one sequence of pipeline steps, over shards and plans.

No Dagster here, so ``ingest run``'s dry check, benchmarks and tests can drive it alone. The
sequence is :data:`STEPS`, named by the asset each step materializes; the Dagster assets call
:meth:`IngestEngine.run` with their own name, and :meth:`IngestEngine.run_pending` calls the
same method for each step in the same order over the partitions that have work. There is no
other write path.

================  ==================================================================
module            job
================  ==================================================================
``keys``          shards and reuse keys (parse, parent, child and graph sets)
``scan``          the scan step: inbox files against the store
``parse``         the parse step, failures and limits
``chunk``         the parent and child steps and their shared reuse logic
``graph``         the graph step
``embed``         the embeddings step (only texts never embedded under the model go to it)
``pending``       what a run would have work in (read-only)
``reuse``         the one reuse decision: keep, relink, skip or create a set
``progress``      step log lines and progress bars
``results``       typed step results, per shard
``summary``       a run's summary, read from the step results the store recorded
``tasks``         what worker processes run: parse a file, chunk or graph a document
``workers``       the worker pool
``ray_executor``  the same jobs on a Ray cluster (``INGEST_EXECUTOR=ray``)
``batching``      bounded batches of a step's work
================  ==================================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from chunking.parsers import ParseLimits
from ingest_assets.engine import chunk, embed, graph
from ingest_assets.engine.batching import subset
from ingest_assets.engine.keys import SHARDS, child_set_key, graph_set_key, parent_set_key, shard_of
from ingest_assets.engine.parse import parse_sources, parse_task
from ingest_assets.engine.pending import IdleShard, Pending, pending_work
from ingest_assets.engine.results import (
    RESULT_OF_STEP,
    ChunkResult,
    EmbedResult,
    FailedFile,
    GraphResult,
    ParseResult,
    ScanResult,
    ShardResults,
    StepResult,
    combined,
    counts,
)
from ingest_assets.engine.scan import scan_diff
from ingest_assets.engine.tasks import parse_source
from ingest_assets.engine.workers import prefetch
from ingest_assets.plans import Plan
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore
from ingest_assets.store.changes import local_run_id
from ingest_assets.store.serving import PlanRegistration
from ingest_assets.store.step_results import record_step_results

__all__ = [
    "CHUNK_STEPS",
    "DOCUMENT_STEPS",
    "RESULT_OF_STEP",
    "SHARDS",
    "STEPS",
    "ChunkResult",
    "EmbedResult",
    "FailedFile",
    "GraphResult",
    "IdleShard",
    "IngestEngine",
    "ParseResult",
    "Pending",
    "RunReport",
    "ScanResult",
    "ShardResults",
    "StepResult",
    "child_set_key",
    "combined",
    "graph_set_key",
    "parent_set_key",
    "shard_of",
]

# The sequence, by the asset each step materializes: the document steps run per shard, the
# chunk steps per plan and shard, each after the ones before it.
DOCUMENT_STEPS = ("sources", "documents")
CHUNK_STEPS = ("parent_chunks", "child_chunks", "graph_nodes", "embeddings")
STEPS = DOCUMENT_STEPS + CHUNK_STEPS


@dataclass
class RunReport:
    """What :meth:`IngestEngine.run_pending` found and did: the pending work, then each step's
    per-shard results, by step name (document steps) or by step name and plan key."""

    pending: Pending
    documents: dict[str, ShardResults] = field(default_factory=dict)
    chunks: dict[str, dict[str, ShardResults]] = field(default_factory=dict)

    @property
    def chunker_calls(self) -> int:
        """Chunker calls the run made (parents and children, every plan)."""
        return sum(
            results.total.chunker_calls
            for step in ("parent_chunks", "child_chunks")
            for results in self.chunks.get(step, {}).values()
        )

    @property
    def texts_embedded(self) -> int:
        """Texts the run gave to an embedding model (every plan)."""
        return sum(results.total.texts_embedded for results in self.chunks.get("embeddings", {}).values())


class IngestEngine:
    """Runs each pipeline step over shards, reusing every set whose key is already stored.

    Args:
        store: The store.
        inbox: The folder scanned for sources (see :mod:`ingest_assets.inbox`).
        plans: The plans of the plans file.
        settings: The parse limits and where jobs run (the executor, the number of workers);
            default the store's.
    """

    def __init__(
        self, store: IngestStore, inbox: str | Path, plans: Sequence[Plan], settings: Settings | None = None
    ) -> None:
        self.store = store
        self.inbox = Path(inbox)
        self.plans = {plan.key: plan for plan in plans}
        self.settings = settings or store.settings

    @property
    def limits(self) -> ParseLimits:
        """The per-document parse limits in force."""
        return self.settings.limits

    # ------------------------------------------------------------------ the sequence

    def run(self, step: str, shards: Iterable[str], plan_key: str | None = None) -> ShardResults:
        """Run one step of :data:`STEPS` over ``shards`` (and ``plan_key``, for a chunk step) on
        one store connection, opened at its start and closed at its end (between steps another
        process can write). Returns the step's result per shard, which it also records in the
        store (``step_results``, under the store's run id: run summaries are read from there).

        The parent step first records the plans file's plans in the store. The graph and
        embeddings steps end by promoting what each document now has all of, and by switching
        a building plan key live once it covers every document (see
        :mod:`ingest_assets.store.serving`).

        Raises:
            KeyError: ``step`` is not a step, or ``plan_key`` is not in the plans file (the
                message lists the plans; nothing is written).
        """
        shards = sorted(set(shards))
        with self.store.session():
            results = self._run_step(step, shards, plan_key)
            counted = {shard: counts(result) for shard, result in results.items()}
            record_step_results(self.store, step, plan_key if step in CHUNK_STEPS else None, counted)
        return results

    def _run_step(self, step: str, shards: list[str], plan_key: str | None) -> ShardResults:
        if step == "sources":
            return self.scan(shards)
        if step == "documents":
            return self.parse(shards)
        if step not in CHUNK_STEPS:
            raise KeyError(f"unknown step {step!r}; steps: {', '.join(STEPS)}")
        plan = self._plan(plan_key)
        items, unrouted = chunk.work_items(self.store, plan, shards, subset(shards, SHARDS))
        if step == "parent_chunks":
            self.register_plans()
            return ShardResults(
                ChunkResult, chunk.chunk_parents(self.store, plan, items, unrouted, self.settings)
            )
        if step == "child_chunks":
            return ShardResults(
                ChunkResult, chunk.chunk_children(self.store, plan, items, unrouted, self.settings)
            )
        if step == "graph_nodes":
            results = ShardResults(
                GraphResult, graph.build_graph(self.store, plan, items, unrouted, self.settings)
            )
        else:
            results = ShardResults(
                EmbedResult, embed.embed_children(self.store, plan, items, unrouted, self.settings)
            )
        self.store.publish(plan.key, plan.kinds, plan.embedding_key, shards=shards)
        return results

    def run_pending(self) -> RunReport:
        """Run the sequence over the partitions with work, as ``ingest run`` does through Dagster.

        With nothing pending it reads, chunks and writes nothing. Its writes are recorded
        under one new ``local-...`` run id, unless the store was given a run id (Dagster's).
        """
        if self.store.run_id.startswith("local-"):
            self.store.run_id = local_run_id()
        report = RunReport(self.pending())
        for step in DOCUMENT_STEPS if report.pending.documents else ():
            report.documents[step] = self.run(step, report.pending.documents)
        for plan_key, shards in report.pending.chunks.items():
            for step in CHUNK_STEPS:
                report.chunks.setdefault(step, {})[plan_key] = self.run(step, shards, plan_key)
        return report

    def pending(self, shards: Iterable[str] = SHARDS) -> Pending:
        """Say, without writing anything, which partitions a run would have work in (see
        :mod:`ingest_assets.engine.pending`)."""
        shards = set(shards)
        with self.store.session():
            try:
                diff = scan_diff(self.store, self.inbox, shards)
            except FileNotFoundError:
                diff = None  # the scan step reports the missing inbox
            return pending_work(self.store, self.plans, self.limits, shards, diff)

    def prefetch_parse(self, pending: Pending) -> int:
        """Start parsing what the parse step will parse (``pending.to_parse``) on the worker
        pool now, and as each file is parsed, chunking its parent and then its child set for
        every plan with chunk work, so the workers parse and chunk while this process does
        something else (imports Dagster, writes what the steps before made); the steps take the
        results of the same jobs (see :func:`.workers.prefetch`: nothing starts for little work
        or one worker). Returns how many files were started."""
        jobs = ((parse_task(source, self.limits), source.size) for source in pending.to_parse)
        plans = [self._plan(key) for key in pending.chunks]
        then = partial(chunk.chunk_after_parse, plans) if plans else None
        return prefetch(parse_source, jobs, self.settings, then=then, background=True)

    def prefetch_chunks(self, pending: Pending) -> int:
        """Start chunking the sets the first chunk run will make (the first plan key of
        ``pending.chunks``: its parent sets to make, and its child sets to make over parent
        sets already stored) on the worker pool now, as :meth:`prefetch_parse` does for
        parsing; the chunk steps take the results of the same sets. Only when no document work
        is pending (it would change what is chunked). Returns how many jobs were started."""
        if pending.documents or not pending.chunks:
            return 0
        plan_key, shards = next(iter(pending.chunks.items()))
        plan = self._plan(plan_key)
        with self.store.session():
            items, _ = chunk.work_items(self.store, plan, shards, subset(shards, SHARDS))
            return chunk.prefetch_chunks(self.store, plan, items, self.settings)

    # ------------------------------------------------------------------ the steps

    def register_plans(self) -> list[str]:
        """Record the engine's plans in the store (a new key builds beside its plan's live key;
        see :meth:`IngestStore.sync_plans`); returns the keys newly registered or brought back."""
        plans = self.plans.values()
        return self.store.sync_plans(
            [PlanRegistration(p.key, p.name, p.fingerprint, p.settings(), p.kinds) for p in plans]
        )

    def scan(self, shards: Iterable[str] = SHARDS) -> ShardResults[ScanResult]:
        """Record new, changed and deleted files of the inbox in ``shards`` (see :mod:`.scan`).

        Raises:
            FileNotFoundError: The inbox folder does not exist.
        """
        shards = set(shards)
        with self.store.session():
            diff = scan_diff(self.store, self.inbox, shards)
            self.store.write_sources(diff.writes)
        return ShardResults(ScanResult, diff.results)

    def parse(self, shards: Iterable[str] = SHARDS) -> ShardResults[ParseResult]:
        """Parse every current source in ``shards`` whose bytes (or parsers) changed since last time."""
        shards = set(shards)
        with self.store.session():
            results = parse_sources(self.store, self.store.sources(shards).values(), self.settings, shards)
        return ShardResults(ParseResult, results)

    def _plan(self, plan_key: str | None) -> Plan:
        try:
            return self.plans[plan_key]  # type: ignore[index]
        except KeyError:
            raise KeyError(
                f"plan {plan_key!r} is not in the plans file; its plans: {sorted(self.plans)}"
            ) from None
