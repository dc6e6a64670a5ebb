"""Build chunkers from plain data (a plan file), by strategy name."""

from __future__ import annotations

from typing import Any

from chunking.chunkers.base import BaseChunker
from chunking.chunkers.leveling import ParentChildChunker
from chunking.chunkers.recursive import RecursiveChunker
from chunking.chunkers.section import SectionChunker
from chunking.chunkers.turns import TurnWindowChunker

__all__ = ["CHUNKER_TYPES", "chunker_from_settings"]

CHUNKER_TYPES: dict[str, type[BaseChunker] | type[ParentChildChunker]] = {
    RecursiveChunker.strategy: RecursiveChunker,
    SectionChunker.strategy: SectionChunker,
    TurnWindowChunker.strategy: TurnWindowChunker,
    ParentChildChunker.strategy: ParentChildChunker,
}


def chunker_from_settings(data: dict[str, Any]) -> BaseChunker | ParentChildChunker:
    """Build a chunker from ``{"strategy": name, **fields}``; nested chunkers likewise.

    Raises:
        ValueError: No or an unknown ``strategy`` (the message lists the known ones).
        pydantic.ValidationError: A field is unknown or out of range (the message names it).
    """
    if not isinstance(data, dict) or "strategy" not in data:
        raise ValueError(f"a chunker needs a 'strategy', one of: {', '.join(CHUNKER_TYPES)}")
    fields = dict(data)
    name = fields.pop("strategy")
    kind = CHUNKER_TYPES.get(name)
    if kind is None:
        raise ValueError(f"unknown chunker strategy {name!r}; use one of: {', '.join(CHUNKER_TYPES)}")
    for key, value in fields.items():
        if isinstance(value, dict) and "strategy" in value:
            fields[key] = chunker_from_settings(value)
    return kind.model_validate(fields)
