"""A plan as a user names it (``--plan`` of a command, ``plan`` of a Launchpad config), resolved
against the plans the store holds. No Dagster and no command line here: the CLI and
``defs/exports.py`` both call :func:`resolve_plan`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["UnknownPlan", "plan_history", "resolve_plan"]


class UnknownPlan(ValueError):
    """No stored plan has the key or live name asked for; the message lists the stored plans."""


def resolve_plan(store: Any, name: str, option: str = "--plan", *, served: bool = False) -> str:
    """The plan key ``name`` means in ``store``: a stored plan key, or the name of a live plan.

    Args:
        store: An :class:`~ingest_assets.store.IngestStore`.
        name: A plan key or a plan name of the plans file.
        option: How the caller's user gave ``name`` (named in the message).
        served: Only a key the views serve (live) will do: a caller that reads the current
            views (an export, a search) would find nothing of a retired or building key.

    Raises:
        UnknownPlan: No stored plan has that key or live name; the message lists the plans.
            Or, with ``served``, the key is not live; the message names what its plan serves.
    """
    rows = _plans(store)
    keys = {key for key, _, _ in rows}
    if name in keys:
        if served:
            _require_live(name, option, rows)
        return name
    live = [key for key, plan_name, state in rows if plan_name == name and state == "live"]
    if len(live) == 1:
        return live[0]
    raise _unknown(store, name, option, rows)


def plan_history(store: Any, name: str, option: str = "--plan") -> list[str]:
    """The plan keys whose history ``name`` means: that key alone, or every key a plan of that
    name has had (live, building or retired), as a reader following the plan needs them.

    Raises:
        UnknownPlan: No stored plan has that key or name; the message lists the plans.
    """
    rows = _plans(store)
    if name in {key for key, _, _ in rows}:
        return [name]
    named = [key for key, plan_name, _ in rows if plan_name == name]
    if named:
        return named
    raise _unknown(store, name, option, rows)


def _require_live(key: str, option: str, rows: list[tuple[str, str, str]]) -> None:
    (plan_name, state) = next((n, state) for k, n, state in rows if k == key)
    if state == "live":
        return
    live = [k for k, n, s in rows if n == plan_name and s == "live"]
    why = (
        "retired: the views serve nothing of it"
        if state == "retired"
        else "building: the views serve it once all its documents are ready"
    )
    serves = f"plan {plan_name!r} serves {live[0]}" if live else f"plan {plan_name!r} serves no key yet"
    raise UnknownPlan(f"{option} {key}: that key is {why}; {serves} (pass --plan {plan_name})")


def _plans(store: Any) -> list[tuple[str, str, str]]:
    return store.query("SELECT plan_key, name, state FROM plan_status ORDER BY plan_key")


def _unknown(store: Any, name: str, option: str, rows: list[tuple[str, str, str]]) -> UnknownPlan:
    known = (
        ", ".join(f"{key}{'' if state == 'live' else f' ({state})'}" for key, _, state in rows) or "none yet"
    )
    return UnknownPlan(
        f"{option} {name}: no plan with that name or key in {store.path} (plans: {known}); "
        "pass a plan name of plans.yaml, or run `ingest run` first"
    )
