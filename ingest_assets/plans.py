"""Chunking plans: which parent and child chunker each document kind goes through.

A plans file (YAML, default ``plans.yaml``, or ``$INGEST_PLANS``) looks like::

    plans:
      default:
        routes:
          chat:
            parent: {strategy: turn-window, chunk_size: 1024}
            child: {strategy: recursive, chunk_size: 256}
          "*":
            parent: {strategy: section, size: 1024}
            child: {strategy: section, size: 256}

A plan's fingerprint hashes its routes' chunker fingerprints, so it moves exactly when a
chunker's settings or versions move; its key ``<name>-<fingerprint>`` is the Dagster
partition key of the chunk assets. No Dagster import here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chunking import ParentChildChunker, chunker_from_settings
from chunking.ids import settings_hash
from ingest_assets.embeddings import EmbeddingConfig, EmbeddingPlan, ModelError, model_info
from ingest_assets.settings import Settings

__all__ = [
    "Plan",
    "PlanConfig",
    "PlanError",
    "PlansFileConfig",
    "Route",
    "RouteConfig",
    "cached_plans",
    "default_plans_path",
    "load_plans",
]

FALLBACK_ROUTE = "*"
_NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$"


class PlanError(ValueError):
    """A plans file is missing or invalid; the message names the plan, route and field."""


class RouteConfig(BaseModel):
    """The parent and child chunker of one route, each as ``strategy`` plus its fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    parent: dict[str, Any]
    child: dict[str, Any]


class PlanConfig(BaseModel):
    """One named plan: routes keyed by document kind, ``"*"`` for every other kind."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str = ""
    routes: dict[str, RouteConfig] = Field(min_length=1)
    # Absent: the plan has no embedding stage. Not part of the plan's fingerprint.
    embedding: EmbeddingConfig | None = None


class PlansFileConfig(BaseModel):
    """The whole plans file: at least one plan, keyed by name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    plans: dict[str, PlanConfig] = Field(min_length=1)


@dataclass(frozen=True)
class Route:
    """A validated route: the built chunkers and the leveler that runs them."""

    kind: str
    parent: Any
    child: Any
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


def default_plans_path() -> Path:
    """Return ``$INGEST_PLANS``, else ``plans.yaml`` in the working directory."""
    return Path(Settings.from_env().plans_file)


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


def _field_errors(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
        for e in error.errors(include_url=False)
    )


def _build_chunker(plan: str, route: str, role: str, spec: dict[str, Any]) -> Any:
    where = f"plan {plan!r}, route {route!r}, {role} chunker"
    try:
        return chunker_from_settings(dict(spec))
    except ValidationError as error:
        raise PlanError(f"{where}: {_field_errors(error)}") from error
    except (ValueError, TypeError, KeyError) as error:
        raise PlanError(f"{where}: {error}") from error


def build_plan(name: str, config: PlanConfig) -> Plan:
    """Build and fingerprint one plan.

    Raises:
        PlanError: A bad name or chunker setting; the message names plan, route and field.
    """
    import re

    if not re.match(_NAME_PATTERN, name):
        raise PlanError(
            f"plan {name!r}: name must be 1-64 letters, digits, '_', '.' or '-' (it becomes a partition key)"
        )
    routes: dict[str, Route] = {}
    for kind, route in config.routes.items():
        parent = _build_chunker(name, kind, "parent", route.parent)
        child = _build_chunker(name, kind, "child", route.child)
        try:
            leveler = ParentChildChunker(parent=parent, child=child)
        except (ValidationError, ValueError) as error:
            raise PlanError(f"plan {name!r}, route {kind!r}: {error}") from error
        routes[kind] = Route(kind=kind, parent=parent, child=child, leveler=leveler)
    fingerprint = settings_hash(
        {kind: {"parent": r.parent_fingerprint, "child": r.child_fingerprint} for kind, r in routes.items()}
    )
    embedding = None
    if config.embedding is not None:
        try:
            embedding = EmbeddingPlan(model_info(config.embedding.model), config.embedding.text)
        except ModelError as error:
            raise PlanError(f"plan {name!r}, embedding: {error}") from error
    return Plan(
        name=name, fingerprint=fingerprint, routes=routes, description=config.description, embedding=embedding
    )


def parse_plans(data: Any, source: str = "plans") -> list[Plan]:
    """Validate plain data (a loaded plans file) into plans, sorted by name.

    Raises:
        PlanError: The data does not describe valid plans.
    """
    try:
        config = PlansFileConfig.model_validate(data)
    except ValidationError as error:
        raise PlanError(f"{source}: {_field_errors(error)}") from error
    plans = [build_plan(name, plan) for name, plan in sorted(config.plans.items())]
    return plans


def load_plans(path: str | Path | None = None) -> list[Plan]:
    """Load and validate a plans file (default: :func:`default_plans_path`).

    Raises:
        PlanError: The file is missing, not YAML, or describes an invalid plan.
    """
    path = Path(path) if path is not None else default_plans_path()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PlanError(
            f"{path}: cannot read the plans file ({error.strerror}); set INGEST_PLANS or pass --plans"
        ) from error
    except yaml.YAMLError as error:
        raise PlanError(f"{path}: not valid YAML ({error})") from error
    try:
        return parse_plans(data, str(path))
    except PlanError as error:
        if str(error).startswith(str(path)):
            raise
        raise PlanError(f"{path}: {error}") from error
