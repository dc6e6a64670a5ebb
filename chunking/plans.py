"""The plans file (``plans.yaml``): one typed model and its one reader, for the library and the
pipeline alike.

A plans file maps plan names to plans; a plan routes document kinds (``"*"`` for every other
kind) to a parent and a child chunker, each ``strategy`` plus that chunker's own fields
(:data:`chunking.chunkers.registry.RouteChunker`: a typo or a value out of bounds is an error
naming the plan, the route and the field), and may name an embedding stage. Reading a file
builds its chunkers (and loads their tokenizers), so a valid :class:`PlansFile` is runnable.

A renamed setting (``size`` of the section chunker, now ``chunk_size``) is still read under its
old name, with a logged warning and a ``DeprecationWarning`` naming the file, the place and the
new name; fingerprints do not depend on the spelling. The JSON schema editors use for the file
is :func:`chunking.plan_schema.plans_schema`, generated from these models.
"""

from __future__ import annotations

import difflib
import logging
import warnings
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from chunking.chunkers.leveling import ParentChildChunker
from chunking.chunkers.registry import CHUNKER_TYPES, RouteChunker
from chunking.chunkers.schema_docs import document_fields, outside_caller
from chunking.parsers.detect import KINDS

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "FALLBACK_ROUTE",
    "EmbeddingSpec",
    "PlanError",
    "PlanSpec",
    "PlansFile",
    "RouteSpec",
    "leveler_for",
    "parse_plans_data",
    "plan_routes",
    "read_plans_file",
]

logger = logging.getLogger(__name__)

FALLBACK_ROUTE = "*"
DEFAULT_EMBEDDING_MODEL = "wordllama:l2_supercat_256"
# A plan name becomes part of a Dagster partition key.
PlanName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")]
_NAME_RULE = "a plan name is 1-64 letters, digits, '_', '.' or '-' (it becomes a partition key)"
_MODEL = ConfigDict(frozen=True, extra="forbid", json_schema_extra=document_fields)


class PlanError(ValueError):
    """A plans file is missing or invalid; the message names the file, plan, route and field."""


class RouteSpec(BaseModel):
    """The chunkers of one route.

    Attributes:
        parent: The chunker of level-1 chunks (the unit of extraction).
        child: The chunker that splits each parent into level-0 chunks (the unit of search).
    """

    model_config = _MODEL

    parent: RouteChunker
    child: RouteChunker

    @model_validator(mode="after")
    def _child_within_parent(self) -> RouteSpec:
        """A child budget over its parent's (counted by one tokenizer) makes each child a copy
        of its parent: twice the rows, and no smaller unit to search."""
        parent, child = getattr(self.parent, "chunk_size", None), getattr(self.child, "chunk_size", None)
        same_unit = self.parent.tokenizer == self.child.tokenizer
        if parent is not None and child is not None and same_unit and child > parent:
            raise ValueError(
                f"the child chunk_size {child} is over the parent's {parent} ({self.child.tokenizer}): "
                "each child would be a copy of its parent; make the child's smaller"
            )
        return self

    def leveler(self) -> ParentChildChunker:
        """The parent/child chunker that runs this route."""
        return ParentChildChunker(parent=self.parent, child=self.child)


class EmbeddingSpec(BaseModel):
    """A plan's embedding stage; not part of the plan key (a model change re-embeds, it never
    re-chunks).

    Attributes:
        model: An offline model: ``wordllama:<config>_<dim>`` (shipped in the wordllama wheel),
            or ``chonkie:<Class>:<local folder>``.
        text: ``contextual`` (the heading path above the text) or ``text`` (the stored text).
    """

    model_config = _MODEL

    model: str = DEFAULT_EMBEDDING_MODEL
    text: Literal["contextual", "text"] = "contextual"


class PlanSpec(BaseModel):
    """One plan.

    Attributes:
        description: What the plan is for (shown in the UI).
        routes: The route of each document kind (``markdown``, ``html``, ``text``, ``pdf``,
            ``csv``, ``chat``); ``"*"`` takes every other kind.
        embedding: Vectors for the plan's children; absent: the plan embeds nothing.
    """

    model_config = _MODEL

    description: str = ""
    routes: dict[str, RouteSpec] = Field(
        min_length=1, json_schema_extra={"propertyNames": {"enum": sorted([*KINDS, FALLBACK_ROUTE])}}
    )
    embedding: EmbeddingSpec | None = None

    @field_validator("routes")
    @classmethod
    def _known_kinds(cls, routes: dict[str, RouteSpec]) -> dict[str, RouteSpec]:
        # A misspelt kind would route nothing: its documents would fall through to "*" unseen.
        for kind in routes:
            if kind != FALLBACK_ROUTE and kind not in KINDS:
                close = difflib.get_close_matches(kind, KINDS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(
                    f"unknown document kind {kind!r}{hint}; a route is one of {', '.join(sorted(KINDS))}, "
                    f"or {FALLBACK_ROUTE!r} for every other kind"
                )
        return routes

    def route_for(self, kind: str) -> RouteSpec | None:
        """The route for a document kind, else the ``"*"`` route, else None."""
        return self.routes.get(kind) or self.routes.get(FALLBACK_ROUTE)


class PlansFile(BaseModel):
    """A plans file: plans by name. A plan's key is ``<name>-<fingerprint of its chunkers>``.

    Attributes:
        plans: The plans by name (1-64 letters, digits, ``_``, ``.`` or ``-``).
    """

    model_config = _MODEL

    plans: dict[PlanName, PlanSpec] = Field(min_length=1)


def read_plans_file(path: str | Path) -> PlansFile:
    """Read and validate a plans file.

    Raises:
        PlanError: The file cannot be read, is not YAML, or describes an invalid plan; the
            message names the file and, for a bad setting, the plan, route and field.
    """
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise PlanError(
            f"{path}: cannot read the plans file ({error.strerror}); set INGEST_PLANS or pass --plans"
        ) from error
    except yaml.YAMLError as error:
        raise PlanError(_yaml_error(path, error)) from error
    return parse_plans_data(data, str(path))


def _yaml_error(path: str | Path, error: yaml.YAMLError) -> str:
    """A YAML error as ``FILE:LINE:COLUMN: not valid YAML: what``, the place an editor jumps
    to (PyYAML names the text it read "<unicode string>")."""
    mark = getattr(error, "problem_mark", None)
    if mark is None:
        return f"{path}: not valid YAML ({error})"
    what = "; ".join(str(part) for part in (getattr(error, "context", None), error.problem) if part)
    return f"{path}:{mark.line + 1}:{mark.column + 1}: not valid YAML: {what}"


def parse_plans_data(data: Any, source: str = "plans") -> PlansFile:
    """Validate plain data (a loaded plans file) named ``source`` in messages.

    Raises:
        PlanError: The data does not describe valid plans.
    """
    if not isinstance(data, dict) or not data.get("plans"):
        raise PlanError(f"{source}: a plans file needs a non-empty 'plans' mapping")
    try:
        return PlansFile.model_validate(_current_names(data, source))
    except ValidationError as error:
        raise PlanError(f"{source}: {_describe(error)}") from error


def _current_names(data: dict[str, Any], source: str) -> dict[str, Any]:
    """``data`` with each renamed chunker setting under its current name, warning of each."""
    plans = data["plans"]
    if not isinstance(plans, dict):
        return data
    renamed: dict[str, Any] = {}
    for name, plan in plans.items():
        routes = plan.get("routes") if isinstance(plan, dict) else None
        if not isinstance(routes, dict):
            renamed[name] = plan
            continue
        new_routes = {
            kind: {
                role: _renamed(spec, f"{source}: plan {name!r}, route {kind!r}, {role} chunker")
                for role, spec in route.items()
            }
            if isinstance(route, dict)
            else route
            for kind, route in routes.items()
        }
        renamed[name] = {**plan, "routes": new_routes}
    return {**data, "plans": renamed}


def _renamed(spec: Any, where: str) -> Any:
    """A chunker's settings with old names made current (nested chunkers too)."""
    if not isinstance(spec, dict):
        return spec
    out = {
        key: _renamed(value, f"{where}, {key}") if isinstance(value, dict) else value
        for key, value in spec.items()
    }
    kind = CHUNKER_TYPES.get(spec.get("strategy"))  # type: ignore[arg-type]
    for old, new in getattr(kind, "renamed", {}).items():
        if old in out and new not in out:
            message = f"{where}: {old!r} is deprecated; write {new!r}"
            logger.warning(message)
            warnings.warn(message, DeprecationWarning, stacklevel=outside_caller())
            out[new] = out.pop(old)
    return out


def _describe(error: ValidationError) -> str:
    """Each error of a plans file as ``plan 'p', route 'r', child chunker (section), field
    'f': message``."""
    return "; ".join(f"{_place(e['loc'])}: {_message(e)}" for e in error.errors(include_url=False))


def _message(error: Any) -> str:
    """One validation error's message, in the plans file's words: an unknown field names the
    field it is closest to; a rule of this module says what it says (no "Value error, ")."""
    if error["type"] == "extra_forbidden" and error["loc"]:
        name = str(error["loc"][-1])
        close = difflib.get_close_matches(name, _FIELD_NAMES, n=1)
        return f"unknown setting {name!r}" + (f"; did you mean {close[0]!r}?" if close else "")
    if error["type"] == "value_error":
        return str(error["ctx"]["error"]) if "ctx" in error else error["msg"]
    if error["type"] == "union_tag_invalid" and "ctx" in error:
        # An unknown strategy: pydantic's "Input tag 'x' found using 'strategy' does not match".
        tag = str(error["ctx"].get("tag", ""))
        close = difflib.get_close_matches(tag.replace("_", "-"), list(CHUNKER_TYPES), n=1)
        known = error["ctx"].get("expected_tags") or ", ".join(repr(name) for name in CHUNKER_TYPES)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"unknown strategy {tag!r}{hint} (the strategies: {known})"
    return error["msg"]


def _place(loc: tuple[int | str, ...]) -> str:
    parts = list(loc)
    if parts[:1] != ["plans"] or len(parts) < 2:
        return f"field {'.'.join(map(str, parts))!r}" if parts else "(top level)"
    if parts[2:3] == ["[key]"]:
        return f"plan {parts[1]!r}: {_NAME_RULE}"
    place = [f"plan {parts[1]!r}"]
    rest = parts[2:]
    if rest[:1] == ["routes"] and len(rest) >= 2:
        place.append(f"route {rest[1]!r}")
        rest = rest[2:]
        if rest[:1] in (["parent"], ["child"]):
            strategy = f" ({rest[1]})" if len(rest) >= 2 and rest[1] in CHUNKER_TYPES else ""
            place.append(f"{rest[0]} chunker{strategy}")
            rest = rest[2:] if strategy else rest[1:]
    if rest:
        place.append(f"field {'.'.join(map(str, rest))!r}")
    return ", ".join(place)


# Every setting a plans file can hold, for "did you mean" (a chunker's own and the plan's).
_FIELD_NAMES = sorted(
    {name for kind in CHUNKER_TYPES.values() for name in kind.model_fields}
    | {name for model in (RouteSpec, PlanSpec, EmbeddingSpec) for name in model.model_fields}
)


def plan_routes(path: str | Path, plan: str | None = None) -> dict[str, RouteSpec]:
    """Return one plan's routes by document kind.

    Args:
        path: The plans file.
        plan: The plan's name; None takes the only plan, or the one named ``default``.

    Raises:
        PlanError: The file is invalid, or has no such plan (the message lists the plans).
    """
    plans = read_plans_file(path).plans
    if plan is None:
        plan = "default" if "default" in plans or len(plans) != 1 else next(iter(plans))
    if plan not in plans:
        raise PlanError(f"{path}: no plan {plan!r}; the plans are: {', '.join(plans)}")
    return plans[plan].routes


def leveler_for(routes: dict[str, RouteSpec], kind: str) -> ParentChildChunker | None:
    """The parent/child chunker of the route for ``kind`` (else ``"*"``); None if unrouted."""
    route = routes.get(kind) or routes.get(FALLBACK_ROUTE)
    return None if route is None else route.leveler()
