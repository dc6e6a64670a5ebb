"""What each step did, as typed results (no Dagster here).

Every step reports per shard (a Dagster partition is a shard, or a plan and a shard), so what
is shown on a partition is true of that partition; :func:`combined` adds a step's shard results
up for a caller that wants one figure. :func:`counts` and :func:`from_counts` are a result's
numbers as the store records them (``step_results``), which run summaries are read from;
``ingest_assets.defs.metadata`` turns results into Dagster metadata for the UI.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ingest_assets.store import PREVIEW_ROWS, SetSummary, SizeStats, summarize

__all__ = [
    "FAILURES_RECORDED",
    "RESULT_OF_STEP",
    "ChunkResult",
    "EmbedResult",
    "FailedFile",
    "GraphResult",
    "ParseResult",
    "ScanResult",
    "ShardResults",
    "StepResult",
    "combined",
    "counts",
    "from_counts",
]


@dataclass(frozen=True)
class FailedFile:
    """A file that failed a step, with the message recorded in ``ingest_failures``."""

    source_uri: str
    message: str


@dataclass
class ScanResult:
    """The inbox files of a shard against the store: ``new + changed + unchanged == files``;
    ``deleted`` files were known and are gone; ``skipped`` counts the links, special files,
    names that are not UTF-8 and files that cannot be read of the shard (not counted in
    ``files``), and ``skipped_files`` names each with why."""

    files: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped: int = 0
    skipped_files: list[str] = field(default_factory=list)


@dataclass
class ParseResult:
    """Current sources of a shard parsed now, left as they were, or failed; parsed by kind.
    (Deleted files are the scan's to report: it reports each once, when it finds it gone.)"""

    parsed: int = 0
    unchanged: int = 0
    failed: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    failures: list[FailedFile] = field(default_factory=list)


@dataclass
class ChunkResult:
    """A parent or child step over one plan and shard.

    ``documents`` current documents the plan routes (``unrouted`` it does not); of them
    ``created`` sets made now, ``reused`` stored already, ``failed`` now, ``skipped_failed``
    whose same content failed before, ``waiting`` (children only) whose parents are not
    current. ``sets`` are the stored sets of the documents (source URI and summary, by set key),
    which the token stats and the preview are over.
    """

    role: str = "parent"
    documents: int = 0
    unrouted: int = 0
    created: int = 0
    reused: int = 0
    failed: int = 0
    skipped_failed: int = 0
    waiting: int = 0
    chunks_written: int = 0
    chunker_calls: int = 0
    failures: list[FailedFile] = field(default_factory=list)
    sets: dict[str, tuple[str, SetSummary]] = field(default_factory=dict, repr=False)

    @property
    def sizes(self) -> SizeStats:
        """Chunk count, token stats and preview over :attr:`sets`."""
        return summarize(self.sets, PREVIEW_ROWS)


@dataclass
class GraphResult:
    """The graph step over one plan and shard: sets ``created`` / ``reused``, documents whose
    current children are missing (``waiting``), ``rows_written`` node and edge rows."""

    documents: int = 0
    unrouted: int = 0
    created: int = 0
    reused: int = 0
    failed: int = 0
    waiting: int = 0
    rows_written: int = 0
    failures: list[FailedFile] = field(default_factory=list)


@dataclass
class EmbedResult:
    """The embeddings step over one plan and shard (all zero for a plan without ``embedding``).

    ``documents`` the plan routes, ``waiting`` whose current children are not there yet; of
    the current child sets, ``sets_reused`` were embedded before under the plan's model and
    text mode, ``sets_embedded`` are now. Of the distinct texts of the sets done now,
    ``texts_embedded`` went to the model (in ``embed_calls`` batches, ``embedding_seconds`` of
    model time) and ``texts_reused`` had a stored vector (another set, plan or run made it).
    """

    documents: int = 0
    unrouted: int = 0
    waiting: int = 0
    sets_embedded: int = 0
    sets_reused: int = 0
    texts_embedded: int = 0
    texts_reused: int = 0
    embed_calls: int = 0
    embedding_seconds: float = 0.0


StepResult = ScanResult | ParseResult | ChunkResult | GraphResult | EmbedResult
# What each step reports, per shard, by the asset it materializes.
RESULT_OF_STEP: dict[str, type[StepResult]] = {
    "sources": ScanResult,
    "documents": ParseResult,
    "parent_chunks": ChunkResult,
    "child_chunks": ChunkResult,
    "graph_nodes": GraphResult,
    "embeddings": EmbedResult,
}
# The failures (and skipped files) of one step and shard a step result records by name; the
# rest are counted.
FAILURES_RECORDED = 10
R = TypeVar("R", ScanResult, ParseResult, ChunkResult, GraphResult, EmbedResult)


def combined(results: Iterable[R], empty: R) -> R:
    """The sum of shard results of one step (counts added, lists and dicts joined); ``empty``
    gives the type and is not changed."""
    total = dataclasses.replace(empty)
    for result in results:
        for f in dataclasses.fields(result):
            mine, theirs = getattr(total, f.name), getattr(result, f.name)
            if isinstance(theirs, bool | str):
                setattr(total, f.name, theirs)
            elif isinstance(theirs, int | float):
                setattr(total, f.name, mine + theirs)
            elif isinstance(theirs, list):
                setattr(total, f.name, [*mine, *theirs])
            elif isinstance(theirs, dict) and f.name == "kinds":
                setattr(total, f.name, {k: mine.get(k, 0) + theirs.get(k, 0) for k in {*mine, *theirs}})
            elif isinstance(theirs, dict):
                setattr(total, f.name, {**mine, **theirs})
    return total


def counts(result: StepResult) -> dict[str, Any]:
    """What the store records of ``result``: its numbers, its role and its kinds (JSON values),
    its first ``FAILURES_RECORDED`` failures as ``[uri, message]`` pairs and skipped files
    (``path: why``), which a run's report names (``ingest_failures`` has every failure); not
    its sets."""
    recorded = {
        f.name: getattr(result, f.name)
        for f in dataclasses.fields(result)
        if isinstance(getattr(result, f.name), int | float | str) or f.name == "kinds"
    }
    failures = getattr(result, "failures", ())
    if failures:
        recorded["failures"] = [[f.source_uri, f.message] for f in failures[:FAILURES_RECORDED]]
    skipped = getattr(result, "skipped_files", ())
    if skipped:
        recorded["skipped_files"] = list(skipped[:FAILURES_RECORDED])
    return recorded


def from_counts(kind: type[R], recorded: dict[str, Any]) -> R:
    """A ``kind`` result from what :func:`counts` recorded (fields it does not know are left out:
    a record written by another version of the code still reads)."""
    known = {f.name for f in dataclasses.fields(kind)}
    values = {name: value for name, value in recorded.items() if name in known}
    if "failures" in values:
        values["failures"] = [FailedFile(uri, message) for uri, message in values["failures"]]
    return kind(**values)


class ShardResults(dict[str, R], Generic[R]):
    """A step's results by shard, with their :attr:`total`."""

    def __init__(self, kind: type[R], results: dict[str, R]) -> None:
        super().__init__(results)
        self.kind = kind

    @property
    def total(self) -> R:
        """The results of every shard added up (see :func:`combined`)."""
        return combined(self.values(), self.kind())
