"""The graph step: document and chunk nodes, HAS_CHUNK / PARENT_OF / NEXT edges per plan
(no Dagster here). A graph set is keyed by its parent and child sets, so it is built once for
each pair and reused by every plan that has the pair."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from ingest_assets.engine.batching import batches
from ingest_assets.engine.chunk import WorkItem, failure
from ingest_assets.engine.keys import expected_keys, graph_set_key
from ingest_assets.engine.progress import StepProgress
from ingest_assets.engine.results import FailedFile, GraphResult
from ingest_assets.engine.reuse import Reuse, decide
from ingest_assets.engine.tasks import GraphTask, graph_records
from ingest_assets.engine.workers import run_batches
from ingest_assets.plans import Plan
from ingest_assets.settings import Settings
from ingest_assets.store import GraphSetWrite, IngestStore, MemberWrite

__all__ = ["build_graph"]


def build_graph(
    store: IngestStore, plan: Plan, items: list[WorkItem], unrouted: dict[str, int], settings: Settings
) -> dict[str, GraphResult]:
    """Point ``plan`` at graph records for each item whose current parents and children it
    holds; the others are counted as ``waiting``. Each batch's documents are promoted as it is
    written (those the plan now has all of)."""
    plan_key = plan.key
    results = {shard: GraphResult(unrouted=n) for shard, n in unrouted.items()}
    by_role = store.members_by_role(plan_key)
    parents, children, graphs = by_role["parent"], by_role["child"], by_role["graph"]
    ready: list[tuple[WorkItem, str, str, str]] = []
    for item in items:
        results[item.document.shard].documents += 1
        parent = parents.get(item.document_id, ("", ""))[0]
        child, based = children.get(item.document_id, ("", ""))
        expected = expected_keys(item.document_id, item.version_id, item.route)[0]
        if parent == expected and based == parent:
            ready.append((item, parent, child, graph_set_key(parent, child)))
        else:
            results[item.document.shard].waiting += 1
    stored = store.existing_sets([g for *_, g in ready], table="graph_sets")
    relink: list[MemberWrite] = []
    todo: list[tuple[WorkItem, str, str, str, MemberWrite]] = []
    for item, parent, child, key in ready:
        member = MemberWrite(plan_key, item.document_id, "graph", key, item.version_id, child)
        # Graph records are not skipped after a failure: building them cannot fail on content.
        decision = decide(graphs.get(item.document_id), key, child, stored=key in stored, failed=False)
        results[item.document.shard].reused += decision.reused
        if decision is Reuse.RELINK:
            relink.append(member)
        elif decision is Reuse.CREATE:
            todo.append((item, parent, child, key, member))
    store.write_graph_sets([], relink)

    # Parents and children each hold about the document's text, the node records again.
    def size(entry: tuple[WorkItem, Any, Any, Any, Any]) -> int:
        return 3 * entry[0].document.text_length

    def work() -> Iterator[tuple[list[Any], list[GraphTask]]]:
        for batch in batches(todo, size):
            rows = store.graph_rows([k for _, p, c, _, _ in batch for k in (p, c)])
            yield (
                batch,
                [
                    GraphTask(
                        item.document_id,
                        item.version_id,
                        item.document.source_uri,
                        item.document.kind,
                        parent,
                        child,
                        key,
                        rows.get(parent, []),
                        rows.get(child, []),
                    )
                    for item, parent, child, key, _ in batch
                ],
            )

    # Timed over the documents' characters, as the chunk steps are (size() is 3 times that).
    started, total = time.perf_counter(), sum(size(entry) for entry in todo)
    # Promoted batch by batch only where readers see it: a plan with an embedding stage is
    # promoted by that step, once vectors exist, and a building key at the step's end.
    live = plan.embedding is None and store.is_live(plan_key)
    with StepProgress(f"graph_nodes {plan_key}", total // 3, "char") as progress:
        for batch, outcomes in run_batches(graph_records, work(), total, settings):
            sets, failures, members = [], [], []
            for (item, *_, member), outcome in zip(batch, outcomes, strict=True):
                result = results[item.document.shard]
                if isinstance(outcome, GraphSetWrite):
                    sets.append(outcome)
                    members.append(member)
                    result.created += 1
                    result.rows_written += len(outcome.nodes) + len(outcome.edges)
                else:
                    failures.append(failure(item, "graph", plan_key, outcome))
                    result.failed += 1
                    result.failures.append(FailedFile(item.document.source_uri, failures[-1].error))
            store.write_graph_sets(sets, members)
            store.record_failures(failures)
            progress.advance(sum(entry[0].document.text_length for entry in batch))
            if live:
                store.publish(plan_key, plan.kinds, None, [m.document_id for m in members])
    if todo:
        store.record_timing("graph", plan_key, len(todo), total // 3, time.perf_counter() - started)
        progress.finished(f"graph records of {len(todo)} documents, {len(relink)} sets relinked")
    return results
