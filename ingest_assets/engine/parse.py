"""The parse step: every current source whose bytes (or parsers) changed since last time.

A parse failure is recorded in ``ingest_failures`` and the same bytes are not tried again; a
refusal over a limit is remembered under the limit in force, so raising the limit retries
exactly the files it refused. The other documents go on.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from chunking import LimitExceeded, ParseError
from chunking.parsers import ParseLimits
from ingest_assets.engine.batching import batches
from ingest_assets.engine.keys import parse_key
from ingest_assets.engine.progress import StepProgress
from ingest_assets.engine.results import FailedFile, ParseResult
from ingest_assets.engine.tasks import ParseTask, parse_source
from ingest_assets.engine.workers import run_batches
from ingest_assets.settings import ENVIRONMENT, LIMIT_FLAGS, Settings
from ingest_assets.store import DocumentWrite, FailureWrite, IngestStore, SourceRow

__all__ = ["limit_message", "needs_parse", "parse_sources", "parse_task"]


def limit_message(error: LimitExceeded) -> str:
    """The failure message of a refusal over a limit: how to raise that limit in the pipeline."""
    variable, flag = ENVIRONMENT[error.limit], LIMIT_FLAGS[error.limit]
    return (
        f"{error.source}: {error.reason} (the pipeline limit {variable}; to ingest this file set "
        f"{variable}={error.value} or more, or run `ingest run {flag} {error.value}`)"
    )


def needs_parse(source: SourceRow, limits: ParseLimits) -> bool:
    """Whether ``source`` has bytes not parsed (nor refused under the limits still in force)."""
    key = parse_key(source.content_hash)
    if source.parse_key == key:
        return False
    recorded = source.parse_key or ""
    if not recorded.startswith(key + ":"):
        return True
    limit, _, value = recorded[len(key) + 1 :].partition("=")
    return not (limit in ParseLimits.model_fields and str(getattr(limits, limit)) == value)


def parse_task(source: SourceRow, limits: ParseLimits) -> ParseTask:
    """The job that parses ``source`` under ``limits`` (equal jobs are the same work)."""
    return ParseTask(str(source.path), source.uri, parse_key(source.content_hash), limits)


def _failure(source: SourceRow, key: str, result: ParseError | str) -> FailureWrite:
    if isinstance(result, LimitExceeded):
        message, key = limit_message(result), f"{key}:{result.limit}={result.allowed}"
    else:
        message = str(result)
    return FailureWrite(
        source.uri,
        source.content_hash,
        "parse",
        message[:2000],
        parse_key=key,
        document_id=source.document_id,
    )


def parse_sources(
    store: IngestStore, sources: Iterable[SourceRow], settings: Settings, shards: Iterable[str]
) -> dict[str, ParseResult]:
    """Parse the ``sources`` that need it (under ``settings``' limits, on its executor); returns
    what happened per shard (of ``shards``)."""
    limits = settings.limits
    results = {shard: ParseResult() for shard in shards}
    pending: list[tuple[SourceRow, str]] = []
    for source in sources:
        if source.deleted:
            continue  # the scan that found the deletion reported it, once
        if needs_parse(source, limits):
            pending.append((source, parse_key(source.content_hash)))
        else:
            results[source.shard].unchanged += 1
    work = (
        (batch, [parse_task(source, limits) for source, _ in batch])
        for batch in batches(pending, lambda pair: pair[0].size)
    )
    started, size = time.perf_counter(), sum(s.size for s, _ in pending)
    with StepProgress("parse", size, "B") as progress:
        for batch, outcomes in run_batches(parse_source, work, size, settings):
            documents: list[DocumentWrite] = []
            failures: list[FailureWrite] = []
            for (source, key), outcome in zip(batch, outcomes, strict=True):
                result = results[source.shard]
                if isinstance(outcome, DocumentWrite):
                    result.parsed += 1
                    result.kinds[outcome.kind] = result.kinds.get(outcome.kind, 0) + 1
                    documents.append(outcome)
                else:
                    failure = _failure(source, key, outcome)
                    result.failed += 1
                    result.failures.append(FailedFile(source.uri, failure.error))
                    failures.append(failure)
            store.write_parsed(documents, failures)
            progress.advance(sum(source.size for source, _ in batch))
    if pending:
        store.record_timing("parse", None, len(pending), size, time.perf_counter() - started)
        parsed = sum(r.parsed for r in results.values())
        progress.finished(f"{parsed} of {len(pending)} files parsed ({len(pending) - parsed} failed)")
    return results
