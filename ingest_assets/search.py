"""``ingest search "TEXT" [--plan NAME] [-k 10]``: the child chunks nearest to a query.

No Dagster here. The query is embedded with the plan's own model (offline, as the pipeline
embeds) and compared with every current child vector of the plan by exact cosine similarity in
DuckDB (``array_cosine_similarity`` over the ``chunk_vectors`` view). That is a full scan:
about 7-10 ms a query at 10k vectors on this machine, growing linearly; past a few hundred
thousand vectors per plan an index would be needed (DuckDB's ``vss`` extension builds HNSW
indexes on ``FLOAT[n]`` columns, in memory, for this very query shape).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from typing import Any

from chunking import Chunk
from ingest_assets.embeddings import load_model
from ingest_assets.plans import Plan, PlanError, load_plans
from ingest_assets.settings import Settings
from ingest_assets.store import IngestStore, StoreError

__all__ = ["Hit", "SearchError", "main", "search"]


class SearchError(ValueError):
    """A search that cannot run: the plan does not embed, or its vectors are not in the store."""


@dataclass(frozen=True)
class Hit:
    """One child chunk found: its id, parent, heading label, source, score and text."""

    id: str
    parent_id: str | None
    label: str | None
    source_uri: str
    score: float
    text: str


def _plan(plans: list[Plan], name: str | None) -> Plan:
    embedding = [p for p in plans if p.embedding is not None]
    if name is None:
        named = [p for p in embedding if p.name == "default"] or embedding
        if not named:
            raise SearchError("no plan in the plans file has an embedding stage; add embedding: to one")
        return named[0]
    for plan in plans:
        if plan.name == name or plan.key == name:
            if plan.embedding is None:
                raise SearchError(
                    f"plan {name!r} has no embedding stage; add embedding: to it in the plans file"
                )
            return plan
    raise SearchError(f"no plan {name!r}; the plans are: {', '.join(p.name for p in plans)}")


def _label(heading_path: list[str]) -> str | None:
    return Chunk.model_construct(heading_path=list(heading_path)).section_label()


def served_key(store: IngestStore, plan: Plan) -> tuple[str, str, int]:
    """The key ``plan``'s name serves (its live key, which is the plans file's key unless a new
    one is still building), with the model spec and dimension its vectors were made with.

    Raises:
        SearchError: No key of the plan serves vectors yet (run ``ingest run`` first).
    """
    rows = store.query(
        "SELECT s.plan_key, e.settings, e.dimension FROM plan_status s "
        "JOIN plan_embeddings e USING (plan_key) WHERE s.name = ? AND s.state = 'live'",
        [plan.name],
    )
    if not rows:
        raise SearchError(f"the store has no vectors of plan {plan.name!r}; run `ingest run` first")
    key, settings, dimension = rows[0]
    return key, json.loads(settings)["model"], int(dimension)


def search(store: IngestStore, plan: Plan, query: str, k: int = 10) -> tuple[str, list[Hit]]:
    """The served key of ``plan`` and its ``k`` current children nearest to ``query``, best first.

    The query is embedded with the model the served vectors were made with, so a search keeps
    working while a new key (or a new model) of the plan is being built.

    Raises:
        SearchError: The plan does not embed, or the store serves no vectors of it yet.
    """
    if plan.embedding is None:
        raise SearchError(f"plan {plan.name!r} has no embedding stage")
    key, spec, dim = served_key(store, plan)
    vector = load_model(spec).embed_batch([query])[0].tolist()
    rows = store.query(
        f"SELECT id::VARCHAR, parent_id::VARCHAR, heading_path, source_uri, "
        f"array_cosine_similarity(vector::FLOAT[{dim}], ?::FLOAT[{dim}]) AS score, text "
        "FROM chunk_vectors WHERE plan_key = ? ORDER BY score DESC, id LIMIT ?",
        [vector, key, k],
    )
    return key, [
        Hit(i, parent, _label(path), uri, float(score), text) for i, parent, path, uri, score, text in rows
    ]


def _print(hits: list[Hit]) -> None:
    for rank, hit in enumerate(hits, 1):
        where = hit.source_uri.rsplit("/", 1)[-1]
        print(f"{rank:>2}. {hit.score:.3f}  {where}  {hit.label or '(no heading)'}")
        print(f"    child {hit.id}  parent {hit.parent_id}")
        flat = " ".join(hit.text.split())
        print(f"    {flat[:100]}{'…' if len(flat) > 100 else ''}")


def main(argv: list[str] | None = None) -> int:
    """``ingest search``; returns the exit code."""
    parser = argparse.ArgumentParser(prog="ingest search", description="Nearest child chunks to a query.")
    parser.add_argument("query", help="the text to search for")
    parser.add_argument("--plan", help="plan name or key (default: 'default', else the first that embeds)")
    parser.add_argument("-k", type=int, default=10, help="how many chunks (default 10)")
    parser.add_argument("--db", help="DuckDB file (default $INGEST_DUCKDB or data/ingest.duckdb)")
    parser.add_argument("--plans", help="plans file (default $INGEST_PLANS or plans.yaml)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    try:
        if args.k <= 0:
            raise SearchError("-k must be a positive number of chunks")
        settings = Settings.from_env()
        plans = load_plans(args.plans or settings.plans_file)
        plan = _plan(plans, args.plan)
        database = args.db or settings.database
        store = IngestStore(database, lock_timeout=settings.lock_timeout_seconds, settings=settings)
        key, hits = search(store, plan, args.query, args.k)
        spec = served_key(store, plan)[1]
    except PlanError as error:
        print(f"ingest search: invalid plans: {error}", file=sys.stderr)
        return 2
    except (SearchError, StoreError, OSError) as error:
        print(f"ingest search: {error}", file=sys.stderr)
        return 1
    if args.json:
        out: list[dict[str, Any]] = [asdict(hit) for hit in hits]
        print(json.dumps({"plan": key, "hits": out}, indent=2))
    else:
        print(f"plan {key}, model {spec}")
        _print(hits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
