"""Resource limits for parsing: what a single source may cost before it is refused."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from chunking.errors import LimitExceeded

__all__ = ["ParseLimits", "check_limit"]

_MIB = 1024 * 1024


class ParseLimits(BaseModel):
    """Upper bounds a parser enforces before doing expensive work.

    A source over a limit raises :class:`~chunking.errors.LimitExceeded` (a ParseError) naming
    the limit and how to raise it. The defaults admit every file of the shared corpus with a wide margin.

    Attributes:
        max_bytes: Largest raw source accepted, in bytes (default 64 MiB).
        max_pages: Most pages a PDF may have (default 2000).
        max_rows: Most data rows a CSV may have, and most turns a chat may have (default 1,000,000).
        max_depth: Deepest nesting of HTML elements kept (default 1000): deeper elements are
            flattened into the one at this depth (their text stays). The HTML tree builder
            spends time in proportion to the depth for each element, so 100,000 nested
            ``<div>`` (1.1 MB) took 35 s; within this depth parsing stays linear in the input.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_bytes: int = Field(default=64 * _MIB, gt=0)
    max_pages: int = Field(default=2000, gt=0)
    max_rows: int = Field(default=1_000_000, gt=0)
    max_depth: int = Field(default=1000, gt=0)


def check_limit(source: str, name: str, value: int, limits: ParseLimits, what: str) -> None:
    """Raise ParseError when ``value`` is over the limit called ``name``.

    Args:
        source: The source URI, for the message.
        name: A field of :class:`ParseLimits` (``max_bytes``, ``max_pages``, ``max_rows``).
        value: The measured size.
        limits: The limits in force.
        what: What ``value`` counts, in words (``"bytes"``, ``"pages"``, ``"rows"``).

    Raises:
        LimitExceeded: ``value`` is over ``getattr(limits, name)`` (a ParseError).
    """
    limit = getattr(limits, name)
    if value > limit:
        raise LimitExceeded(source, name, limit, value, what)
