"""A plan's embedding stage, the text a child chunk embeds under it, and that text's hash.

The ``embedding:`` of a plan is read with the rest of the plans file
(:class:`chunking.plans.EmbeddingSpec`); :class:`EmbeddingPlan` is it resolved to a model.

No Dagster and no store here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chunking.chunk import contextual_text
from chunking.ids import settings_hash
from chunking.versions import CONTEXTUAL_TEXT_VERSION
from ingest_assets.embeddings.models import ModelInfo

__all__ = ["TEXT_MODES", "EmbeddingPlan", "embedded_row_text", "embedded_text", "text_hash"]

# ``contextual``: the chunk's heading path (and title, fences, speaker) above its text, as
# ``Chunk.contextual_text`` gives it; ``text``: the stored text alone.
TEXT_MODES = ("contextual", "text")


@dataclass(frozen=True)
class EmbeddingPlan:
    """A plan's validated embedding stage. Not part of the plan's fingerprint (a model change
    re-embeds, it never re-chunks); :attr:`key` names what its vectors are: the model
    fingerprint and the text mode."""

    model: ModelInfo
    text: str

    @property
    def model_fingerprint(self) -> str:
        return self.model.fingerprint

    @property
    def key(self) -> str:
        """The embedding key of a child set: which model embedded which text of its chunks (for
        contextual text, also the version of what it puts above the text)."""
        what: dict[str, str] = {"model": self.model.fingerprint, "text": self.text}
        if self.text == "contextual":
            what["contextual"] = CONTEXTUAL_TEXT_VERSION
        return settings_hash(what)

    def settings(self) -> dict[str, Any]:
        """JSON-safe description: spec, text mode, model name, dimension, fingerprint, packages."""
        return {
            "model": self.model.spec,
            "text": self.text,
            "name": self.model.name,
            "dimension": self.model.dimension,
            "fingerprint": self.model.fingerprint,
            "packages": self.model.packages,
        }


def embedded_text(chunk: Any, mode: str) -> str:
    """The text ``chunk`` (a ``chunking.Chunk``) embeds under ``mode`` (see :data:`TEXT_MODES`)."""
    return chunk.contextual_text if mode == "contextual" else chunk.text


def embedded_row_text(
    text: str, heading_path: Sequence[str], metadata: Mapping[str, Any] | None, mode: str
) -> str:
    """What :func:`embedded_text` gives for a chunk with these fields, without making the chunk."""
    return contextual_text(text, heading_path, metadata) if mode == "contextual" else text


def text_hash(text: str) -> str:
    """The key of an embedded text: its SHA-256 (hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
