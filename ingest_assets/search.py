"""The child chunks nearest to a query (``ingest search``, see ``ingest_assets.cli.search``).

No Dagster and no command line here. The query is embedded with the plan's own model
(offline, as the pipeline embeds) and compared with every current child vector of the plan by
exact cosine similarity in DuckDB (``array_cosine_similarity`` over the ``chunk_vectors``
view). That is a full scan, growing linearly with the plan's vectors; a much larger corpus
would need an index (DuckDB's ``vss`` extension builds HNSW indexes on ``FLOAT[n]`` columns,
in memory, for this very query shape; docs/embeddings.md has the timings).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from chunking import Chunk
from ingest_assets.embeddings import load_model
from ingest_assets.plans import Plan
from ingest_assets.store import IngestStore

__all__ = ["Hit", "SearchError", "plan_for", "search", "served_key"]


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


def plan_for(plans: list[Plan], name: str | None) -> Plan:
    """The plan ``name`` (a name or key) of ``plans``, or with no name the plan ``default``,
    else the first that embeds.

    Raises:
        SearchError: No such plan, or it has no embedding stage; the message says what to add.
    """
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
        f"array_cosine_similarity(vector::FLOAT[{dim}], ?::JSON::FLOAT[{dim}]) AS score, text "
        "FROM chunk_vectors WHERE plan_key = ? ORDER BY score DESC, id LIMIT ?",
        # The query vector as one JSON text: DuckDB's client binds a list element by element.
        [json.dumps(vector), key, k],
    )
    return key, [
        Hit(i, parent, _label(path), uri, float(score), text) for i, parent, path, uri, score, text in rows
    ]
