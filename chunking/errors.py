"""The error hierarchy of the chunking library.

Every error message names the document or setting at fault and says what the caller can do.
"""

from __future__ import annotations

__all__ = ["ChunkingError", "IngestError", "ParseError", "TokenizerError"]


class IngestError(Exception):
    """Base class of every error this library raises on purpose."""


class ChunkingError(IngestError):
    """A chunker broke its contract or cannot handle a document.

    Raised for results that fail validation (empty text, index gaps, spans outside the
    document, chunks over budget) and for documents that mix text and page units.
    """


class TokenizerError(IngestError, ValueError):
    """A tokenizer name cannot be loaded here; the message lists the names that work."""


class ParseError(IngestError):
    """A source could not be turned into a document.

    Attributes:
        source: The source URI or path that failed.
        reason: What went wrong, in words a person can act on.
        hint: What the user can do about it.
    """

    def __init__(self, source: str, reason: str, hint: str = "") -> None:
        self.source = source
        self.reason = reason
        self.hint = hint
        message = f"{source}: {reason}"
        if hint:
            message += f" ({hint})"
        super().__init__(message)

    def __reduce__(self) -> tuple[type[ParseError], tuple[str, str, str]]:
        # Pickle by fields (the default would call __init__ with the message alone), so the
        # error can come back from a worker process.
        return (type(self), (self.source, self.reason, self.hint))


class LimitExceeded(ParseError):
    """A source is over one of the parse limits (``chunking.parsers.ParseLimits``).

    Attributes:
        limit: The limit's field name (``max_bytes``, ``max_pages``, ``max_rows``).
        allowed: The limit in force.
        value: What the source measured, in the limit's unit.
    """

    def __init__(self, source: str, limit: str, allowed: int, value: int, what: str) -> None:
        self.limit = limit
        self.allowed = allowed
        self.value = value
        self.what = what
        super().__init__(
            source,
            f"{value} {what} is over the limit {limit}={allowed}",
            f"pass limits=ParseLimits({limit}={value}) or more to parse it",
        )

    def __reduce__(self) -> tuple[type[LimitExceeded], tuple[str, str, int, int, str]]:  # type: ignore[override]
        return (type(self), (self.source, self.limit, self.allowed, self.value, self.what))
