"""Deterministic identifiers.

Every id the library hands out is a UUIDv5 of stable inputs, so the same source, content and
settings give the same ids in every process. Nothing here is random.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any
from uuid import UUID, SafeUUID, uuid5

__all__ = [
    "CHUNK_NAMESPACE",
    "DOCUMENT_NAMESPACE",
    "SEPARATOR",
    "VERSION_NAMESPACE",
    "content_hash",
    "settings_hash",
    "stable_uuid",
    "uuid5_of",
    "uuid5_with_prefix",
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


# The bits UUID(version=5) sets: the variant (10xx) and the version (0101).
_KEEP = ~((0xF000 << 64) | (0xC000 << 48))
_SET = (0x8000 << 48) | (5 << 76)
_UNKNOWN = SafeUUID.unknown  # an enum member read once (reading it costs a descriptor call)


# The UUID's slots, set through their descriptors: a call each instead of object.__setattr__'s
# lookup by name.
_SET_INT = UUID.__dict__["int"].__set__
_SET_SAFE = UUID.__dict__["is_safe"].__set__
_from_bytes = int.from_bytes


def uuid5_of(namespace: bytes, name: str) -> UUID:
    """Return ``uuid5(UUID(bytes=namespace), name)``, made without the UUID constructor's
    argument checks (a third of the cost of placing a chunk); the value is the same."""
    return _uuid5_from(hashlib.sha1(namespace + name.encode("utf-8")))


def uuid5_with_prefix(namespace: bytes, prefix: str) -> Callable[[str], UUID]:
    """Return ``tail -> uuid5_of(namespace, prefix + tail)``: the hash of the namespace and the
    prefix is taken once and copied for each name (ids of one document's chunks share their
    document part)."""
    head = hashlib.sha1(namespace + prefix.encode("utf-8"))
    copy = head.copy

    def make(tail: str) -> UUID:
        digest = copy()
        digest.update(tail.encode("utf-8"))
        return _uuid5_from(digest)

    return make


def _uuid5_from(digest: Any) -> UUID:
    """The version-5 UUID of a SHA-1 hash object (the first 16 bytes, with the version bits)."""
    made = object.__new__(UUID)
    # The first 16 of SHA-1's 20 bytes: the digest's value without its last 32 bits.
    _SET_INT(made, ((_from_bytes(digest.digest(), "big") >> 32) & _KEEP) | _SET)
    _SET_SAFE(made, _UNKNOWN)
    return made


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
