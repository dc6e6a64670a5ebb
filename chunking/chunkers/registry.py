"""The chunkers by strategy name: the plans file's union of chunkers, and building from plain data.

:data:`RouteChunker` is the type of a route's ``parent`` and ``child`` in a plans file: one of
the flat chunkers, told apart by ``strategy`` (a pydantic discriminated union), each with its
own fields, defaults and bounds and no other field. :func:`chunker_from_settings` builds any
chunker, the leveler too, from ``{"strategy": name, **fields}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from chunking.chunkers.base import BaseChunker
from chunking.chunkers.leveling import ParentChildChunker
from chunking.chunkers.recursive import RecursiveChunker
from chunking.chunkers.section import SectionChunker
from chunking.chunkers.turns import TurnWindowChunker

__all__ = ["CHUNKER_TYPES", "RouteChunker", "chunker_from_settings", "strategy_of"]

RouteChunker = Annotated[
    SectionChunker | RecursiveChunker | TurnWindowChunker, Field(discriminator="strategy")
]


def strategy_of(kind: type[BaseChunker] | type[ParentChildChunker]) -> str:
    """The strategy name of a chunker class (its ``strategy`` field's one value)."""
    return kind.model_fields["strategy"].default


CHUNKER_TYPES: dict[str, type[BaseChunker] | type[ParentChildChunker]] = {
    strategy_of(kind): kind
    for kind in (RecursiveChunker, SectionChunker, TurnWindowChunker, ParentChildChunker)
}
_FLAT: TypeAdapter[BaseChunker] = TypeAdapter(RouteChunker)


def chunker_from_settings(data: dict[str, Any]) -> BaseChunker | ParentChildChunker:
    """Build a chunker from ``{"strategy": name, **fields}``; nested chunkers likewise.

    Raises:
        ValueError: No or an unknown ``strategy`` (the message lists the known ones).
        pydantic.ValidationError: A field is unknown or out of range (the message names it).
    """
    if not isinstance(data, dict) or "strategy" not in data:
        raise ValueError(f"a chunker needs a 'strategy', one of: {', '.join(CHUNKER_TYPES)}")
    kind = CHUNKER_TYPES.get(data["strategy"])
    if kind is None:
        raise ValueError(
            f"unknown chunker strategy {data['strategy']!r}; use one of: {', '.join(CHUNKER_TYPES)}"
        )
    if kind is not ParentChildChunker:
        return _FLAT.validate_python(data)
    fields = {
        key: chunker_from_settings(value) if isinstance(value, dict) and "strategy" in value else value
        for key, value in data.items()
    }
    return ParentChildChunker.model_validate(fields)
