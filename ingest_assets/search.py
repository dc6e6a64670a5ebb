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
from ingest_assets.store import IngestStore
from ingest_assets.store.plan_names import UnknownPlan, resolve_plan

__all__ = ["Hit", "SearchError", "ServedPlan", "search", "served_plan"]


class SearchError(ValueError):
    """A search that cannot run: no such plan, or it serves no vectors."""


@dataclass(frozen=True)
class Hit:
    """One child chunk found: its id, parent, heading label, source, score and text."""

    id: str
    parent_id: str | None
    label: str | None
    source_uri: str
    score: float
    text: str


@dataclass(frozen=True)
class ServedPlan:
    """A plan as the store serves its vectors: its name, live key, and the model spec and
    dimension the served vectors were made with."""

    name: str
    key: str
    model: str
    dimension: int


def served_plan(store: IngestStore, name: str | None = None) -> ServedPlan:
    """The plan ``name`` (a name, or any key it has had) as the store serves it, or with no
    name the plan ``default``, else the first by name that serves vectors. From the store
    alone: a reader needs no plans file, and the model is the one the served vectors were made
    with, so a search keeps working while a new key (or model) of the plan is being built.

    Raises:
        SearchError: No such plan, or it serves no vectors (it does not embed, or has not run).
    """
    plans = store.query("SELECT plan_key, name, state FROM plan_status ORDER BY name, plan_key")
    if not plans:
        raise SearchError("the store holds no plan yet; run `ingest run` first")
    live = {
        plan_name: ServedPlan(plan_name, key, json.loads(settings)["model"], int(dimension))
        for plan_name, key, settings, dimension in store.query(
            "SELECT s.name, s.plan_key, e.settings, e.dimension FROM plan_status s "
            "JOIN plan_embeddings e USING (plan_key) WHERE s.state = 'live' ORDER BY s.name"
        )
    }
    if name is None:
        if not live:
            raise SearchError(
                "no plan in the store serves vectors; add embedding: to a plan of the plans file "
                "and run `ingest run`"
            )
        return live.get("default") or next(iter(live.values()))
    named = {key: plan_name for key, plan_name, _ in plans} | {n: n for _, n, _ in plans}
    if name not in named:
        known = ", ".join(sorted({n for _, n, _ in plans}))
        raise SearchError(f"no plan {name!r} in the store; its plans are: {known}")
    if name != named[name]:  # a key: search serves the views, so only the live one
        try:
            resolve_plan(store, name, served=True)
        except UnknownPlan as error:
            raise SearchError(str(error)) from error
    if named[name] not in live:
        raise SearchError(
            f"plan {named[name]!r} serves no vectors: add embedding: to it in the plans file and "
            "run `ingest run`"
        )
    return live[named[name]]


def _label(heading_path: list[str]) -> str | None:
    return Chunk.model_construct(heading_path=list(heading_path)).section_label()


def search(store: IngestStore, plan: ServedPlan, query: str, k: int = 10) -> list[Hit]:
    """The ``k`` current children of ``plan`` (:func:`served_plan`) nearest to ``query``, best
    first; the query is embedded with the model the served vectors were made with. Contents
    and index pages (``content_kind`` ``toc``) are left out: their lines repeat section titles
    word for word, so they rank high for a title and hold none of its text."""
    dim = plan.dimension
    vector = load_model(plan.model).embed_batch([query])[0].tolist()
    rows = store.query(
        f"SELECT id::VARCHAR, parent_id::VARCHAR, heading_path, source_uri, "
        f"array_cosine_similarity(vector::FLOAT[{dim}], ?::JSON::FLOAT[{dim}]) AS score, text "
        "FROM chunk_vectors WHERE plan_key = ? AND content_kind <> 'toc' ORDER BY score DESC, id LIMIT ?",
        # The query vector as one JSON text: DuckDB's client binds a list element by element.
        [json.dumps(vector), plan.key, k],
    )
    return [
        Hit(i, parent, _label(path), uri, float(score), text) for i, parent, path, uri, score, text in rows
    ]
