"""Read a plans file's chunkers without the pipeline: ``plans.yaml`` routes to chunkers.

A plans file maps plan names to routes keyed by document kind (``"*"`` for every other kind),
each route a parent and a child chunker given as ``strategy`` plus that chunker's fields (see the
project's ``plans.yaml``). This module reads only what building a route's chunkers needs, through
:func:`chunking.chunkers.chunker_from_settings`, the same registry the pipeline builds them with;
the pipeline's own plan model (keys, fingerprints, validation messages) stays in the pipeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from chunking.chunkers.base import BaseChunker
from chunking.chunkers.leveling import ParentChildChunker
from chunking.chunkers.registry import chunker_from_settings

__all__ = ["FALLBACK_ROUTE", "leveler_for", "plan_routes", "read_plans"]

FALLBACK_ROUTE = "*"


def read_plans(path: str | Path) -> dict[str, dict[str, Any]]:
    """Return the ``plans`` mapping of a plans file (plan name to its raw config).

    Raises:
        ValueError: The file is not YAML with a non-empty ``plans`` mapping (the message names
            the file).
    """
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    plans = data.get("plans") if isinstance(data, dict) else None
    if not isinstance(plans, dict) or not plans:
        raise ValueError(f"{path}: a plans file needs a non-empty 'plans' mapping")
    return plans


def plan_routes(path: str | Path, plan: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """Return one plan's routes, ``{kind: {"parent": settings, "child": settings}}``.

    Args:
        path: The plans file.
        plan: The plan's name; None takes the only plan, or the one named ``default``.

    Raises:
        ValueError: No such plan (the message lists the plans), or the plan has no routes.
    """
    plans = read_plans(path)
    if plan is None:
        plan = "default" if "default" in plans or len(plans) != 1 else next(iter(plans))
    if plan not in plans:
        raise ValueError(f"{path}: no plan {plan!r}; the plans are: {', '.join(plans)}")
    routes = (plans[plan] or {}).get("routes")
    if not isinstance(routes, dict) or not routes:
        raise ValueError(f"{path}: plan {plan!r} has no routes")
    return routes


def leveler_for(routes: dict[str, dict[str, dict[str, Any]]], kind: str) -> ParentChildChunker | None:
    """Build the parent/child chunker of the route for ``kind`` (else ``"*"``); None if unrouted.

    Raises:
        ValueError: A chunker's strategy is missing or unknown.
        pydantic.ValidationError: A chunker's field is unknown or out of range.
    """
    route = routes.get(kind) or routes.get(FALLBACK_ROUTE)
    if route is None:
        return None
    parent, child = (chunker_from_settings(dict(route[role])) for role in ("parent", "child"))
    if not isinstance(parent, BaseChunker) or not isinstance(child, BaseChunker):
        raise ValueError(f"route {kind!r}: parent and child must be flat chunkers")
    return ParentChildChunker(parent=parent, child=child)
