"""Chunking plans for the pipeline: each plan of the plans file, built, fingerprinted and keyed.

The file is read by :func:`chunking.plans.read_plans_file`, the one reader and the one typed
model of ``plans.yaml`` (its chunkers are built and validated there; a bad plan is a
:class:`PlanError` naming the plan, route and field). Here each plan gets its fingerprint, a
hash of its routes' chunker fingerprints, so it moves exactly when a chunker's settings or
versions move; its key ``<name>-<fingerprint>`` is the Dagster partition key of the chunk
assets; and its embedding model is resolved. No Dagster import here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from chunking import BaseChunker, ParentChildChunker
from chunking.ids import settings_hash
from chunking.plans import FALLBACK_ROUTE, PlanError, PlanSpec, parse_plans_data, read_plans_file
from ingest_assets.embeddings import EmbeddingPlan, ModelError, model_info

__all__ = [
    "Plan",
    "PlanError",
    "Route",
    "build_plan",
    "cached_plans",
    "load_plans",
    "parse_plans",
]


@dataclass(frozen=True)
class Route:
    """A validated route: the built chunkers and the leveler that runs them."""

    kind: str
    parent: BaseChunker
    child: BaseChunker
    leveler: ParentChildChunker

    # Taken once, when the plan is built, like the plan's own fingerprint: a route and its plan
    # key always agree, and the steps read them per document without hashing settings again.
    @cached_property
    def parent_fingerprint(self) -> str:
        return self.parent.fingerprint()

    @cached_property
    def child_fingerprint(self) -> str:
        return self.child.fingerprint()


@dataclass(frozen=True)
class Plan:
    """A validated plan with its fingerprint and partition key."""

    name: str
    fingerprint: str
    routes: dict[str, Route]
    description: str = ""
    # The embedding stage (None: the plan embeds nothing); outside the fingerprint, so a model
    # change re-embeds without re-chunking.
    embedding: EmbeddingPlan | None = None

    @property
    def key(self) -> str:
        """The partition key: ``<name>-<16 hex fingerprint>``."""
        return f"{self.name}-{self.fingerprint}"

    @property
    def kinds(self) -> tuple[str, ...] | None:
        """The document kinds the plan routes, sorted (None: every kind, through ``"*"``)."""
        return None if FALLBACK_ROUTE in self.routes else tuple(sorted(self.routes))

    @property
    def embedding_key(self) -> str | None:
        """The key of the plan's embedding stage (None: the plan embeds nothing)."""
        return None if self.embedding is None else self.embedding.key

    def route_for(self, kind: str) -> Route | None:
        """Return the route for a document kind, the ``"*"`` route, or None (kind not routed)."""
        return self.routes.get(kind) or self.routes.get(FALLBACK_ROUTE)

    def settings(self) -> dict[str, Any]:
        """Return every route's full chunker settings (versions included), JSON-safe."""
        return {
            kind: {"parent": r.parent.settings(), "child": r.child.settings()}
            for kind, r in sorted(self.routes.items())
        }


@lru_cache(maxsize=8)
def _plans_at(path: str, mtime_ns: int, size: int) -> tuple[Plan, ...]:
    return tuple(load_plans(path))


def cached_plans(path: str | Path) -> list[Plan]:
    """:func:`load_plans`, once per process for each content of the file (keyed by its path,
    mtime and size): building chunkers loads tokenizers, and every step asks.

    Raises:
        PlanError: The file is missing or invalid.
    """
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        return load_plans(path)  # raises the PlanError that names the problem
    return list(_plans_at(str(path), stat.st_mtime_ns, stat.st_size))


def build_plan(name: str, spec: PlanSpec) -> Plan:
    """Build and fingerprint one plan of a validated plans file.

    Raises:
        PlanError: The embedding model cannot be had (the message names the plan).
    """
    routes = {
        kind: Route(kind=kind, parent=route.parent, child=route.child, leveler=route.leveler())
        for kind, route in spec.routes.items()
    }
    fingerprint = settings_hash(
        {kind: {"parent": r.parent_fingerprint, "child": r.child_fingerprint} for kind, r in routes.items()}
    )
    embedding = None
    if spec.embedding is not None:
        try:
            embedding = EmbeddingPlan(model_info(spec.embedding.model), spec.embedding.text)
        except ModelError as error:
            raise PlanError(f"plan {name!r}, embedding: {error}") from error
    return Plan(
        name=name, fingerprint=fingerprint, routes=routes, description=spec.description, embedding=embedding
    )


def parse_plans(data: Any, source: str = "plans") -> list[Plan]:
    """Validate plain data (a loaded plans file) into plans, sorted by name.

    Raises:
        PlanError: The data does not describe valid plans.
    """
    return _built(parse_plans_data(data, source).plans, source)


def load_plans(path: str | Path) -> list[Plan]:
    """Load and validate the plans file at ``path`` (``Settings.plans_file`` names the
    pipeline's), sorted by name.

    Raises:
        PlanError: The file is missing, not YAML, or describes an invalid plan.
    """
    path = Path(path)
    return _built(read_plans_file(path).plans, str(path))


def _built(specs: dict[str, PlanSpec], source: str) -> list[Plan]:
    try:
        return [build_plan(name, spec) for name, spec in sorted(specs.items())]
    except PlanError as error:
        raise PlanError(f"{source}: {error}") from error
