"""What a chunker's JSON schema and its deprecation warnings say, from the chunker class itself.

A chunker documents its settings once, in its docstring's ``Attributes:`` section (Google
style); :func:`document_fields` copies those lines into its JSON schema (the one editors show
for ``plans.yaml``), and lists each renamed setting under its old name as deprecated.
"""

from __future__ import annotations

import inspect
import re
import sys
from typing import Any

__all__ = ["attribute_docs", "document_fields", "outside_caller"]

_ENTRY = re.compile(r"^(\w+):\s*(.*)$")
# What a deprecated name's schema keeps of the current name's: the type and its bounds.
_TYPE_KEYS = ("type", "anyOf", "minimum", "maximum", "exclusiveMinimum", "enum", "$ref")


def attribute_docs(cls: type) -> dict[str, str]:
    """Each attribute's description from the ``Attributes:`` sections of ``cls`` and its bases
    (the nearest class's wins), as one line of text."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        docs.update(_section(inspect.cleandoc(klass.__dict__.get("__doc__") or "")))
    return docs


def _section(doc: str) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    inside, current = False, None
    for line in doc.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            inside, current = line.strip() == "Attributes:", None
            continue
        if not inside:
            continue
        entry = _ENTRY.match(line.strip())
        if entry and len(line) - len(line.lstrip()) <= 4:
            current = entry.group(1)
            out[current] = [entry.group(2)]
        elif current is not None:
            out[current].append(line.strip())
    return {name: " ".join(parts) for name, parts in out.items()}


def document_fields(schema: dict[str, Any], cls: type) -> None:
    """Fill ``schema`` (a model class's JSON schema, in place): the docstring's first paragraph
    as its description, each property's from :func:`attribute_docs`, ``strategy`` required
    (the tag of the union of chunkers), and each old name of :attr:`BaseChunker.renamed` as a
    deprecated property of the current one's type."""
    properties = schema.get("properties", {})
    summary = inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0]
    if summary:
        schema["description"] = " ".join(summary.split())
    if "strategy" in properties:  # the union's tag: without it no chunker can be told apart
        schema["required"] = ["strategy", *(n for n in schema.get("required", []) if n != "strategy")]
    docs = attribute_docs(cls)
    for name, prop in properties.items():
        if name in docs and "description" not in prop:
            prop["description"] = docs[name]
    for old, new in getattr(cls, "renamed", {}).items():
        if new in properties:
            kept = {key: value for key, value in properties[new].items() if key in _TYPE_KEYS}
            properties[old] = {**kept, "deprecated": True, "description": f"The old name of `{new}`."}


def outside_caller() -> int:
    """The ``stacklevel`` for a warning raised by the caller of this function that points at
    the first frame outside this library and pydantic (the code that gave the setting)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in ("chunking", "pydantic"):
        frame, level = frame.f_back, level + 1
    return level
