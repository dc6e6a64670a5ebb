"""Deterministic identifiers.

Every id the library hands out is a UUIDv5 of stable inputs, so the same source, content and
settings give the same ids in every process. Nothing here is random.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from uuid import UUID, uuid5

__all__ = [
    "CHUNK_NAMESPACE",
    "DOCUMENT_NAMESPACE",
    "SEPARATOR",
    "VERSION_NAMESPACE",
    "content_hash",
    "settings_hash",
    "stable_uuid",
]

# Fixed namespaces: changing one changes every id the library has ever written.
DOCUMENT_NAMESPACE = UUID("6f1c2a4e-9b0d-5e3a-8c71-2d4b6a8e0f13")
VERSION_NAMESPACE = UUID("0b7d9e21-4c6a-5f80-9d12-7e3f5a1b2c48")
CHUNK_NAMESPACE = UUID("a3e58c17-2f94-5b6d-8e0a-91c4d7f2b365")
# Joins the parts of an id's name: a control character no text, number or UUID part contains.
SEPARATOR = "\x1f"


def stable_uuid(namespace: UUID, *parts: object) -> UUID:
    """Return a UUIDv5 of ``parts`` joined with a separator no part can forge."""
    return uuid5(namespace, SEPARATOR.join(map(str, parts)))


def content_hash(data: bytes | str) -> str:
    """Return the SHA-256 hex digest of raw bytes, or of a text encoded as UTF-8."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def settings_hash(settings: Any) -> str:
    """Return 16 hex characters of the SHA-256 of canonical JSON of ``settings``.

    Keys are sorted and separators fixed, so equal settings hash equally in any process.
    """
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:16]
