"""Chat transcripts: JSON ``{"title", "turns": [{"speaker", "text"}], "meta"}`` or JSON Lines.

The layout is :meth:`chunking.document.Document.from_turns`: each turn rendered as
``speaker: text``, turns separated by a blank line, one :class:`Turn` and one unit per turn.
"""

from __future__ import annotations

import json
from typing import Any

from chunking.document import Document
from chunking.errors import ParseError
from chunking.parsers.base import build_document, title_from_uri
from chunking.parsers.encoding import decode
from chunking.parsers.limits import ParseLimits, check_limit

__all__ = ["PARSER_VERSION", "parse"]

PARSER_VERSION = "3"  # 3: short cp1252 text with curly quotes is read as cp1252 (encoding.py)
LIBRARY = "python json (stdlib)"
_HINT = 'write {"title": ..., "turns": [{"speaker": ..., "text": ...}]} or one such turn per line'


def _load(text: str, source_uri: str) -> tuple[Any, str]:
    """Return the parsed JSON and its layout name (``json`` or ``jsonl``)."""
    try:
        return json.loads(text), "json"
    except RecursionError as exc:
        raise ParseError(source_uri, "JSON nested too deeply to read", _HINT) from exc
    except json.JSONDecodeError as exc:
        whole_error = exc
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        raise ParseError(source_uri, f"malformed JSON: {whole_error}", _HINT) from whole_error
    turns: list[Any] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            turns.append(json.loads(line))
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ParseError(
                source_uri, f"malformed JSON (not JSON, nor JSON Lines at line {number}: {exc})", _HINT
            ) from exc
    return turns, "jsonl"


def _turns(payload: Any, source_uri: str) -> tuple[list[tuple[str, str]], str, Any]:
    if isinstance(payload, dict):
        raw_turns, title, meta = payload.get("turns"), payload.get("title"), payload.get("meta")
    else:
        raw_turns, title, meta = payload, None, None
    if not isinstance(raw_turns, list):
        raise ParseError(source_uri, "no list of turns found", _HINT)
    turns: list[tuple[str, str]] = []
    for index, turn in enumerate(raw_turns):
        if not isinstance(turn, dict):
            raise ParseError(source_uri, f"turn {index} is not an object", _HINT)
        speaker, said = turn.get("speaker"), turn.get("text")
        if not isinstance(speaker, str) or not speaker.strip():
            raise ParseError(source_uri, f"turn {index} has no speaker string", _HINT)
        if not isinstance(said, str):
            raise ParseError(source_uri, f"turn {index} ({speaker}) has no text string", _HINT)
        turns.append((speaker.strip(), said.replace("\r\n", "\n").strip()))
    return turns, title if isinstance(title, str) else "", meta


def parse(data: bytes, source_uri: str, limits: ParseLimits) -> Document:
    """Parse chat JSON or JSON Lines bytes into a document with turns.

    Raises:
        ParseError: Undecodable bytes, malformed JSON, a turn without speaker or text, more than
            ``limits.max_rows`` turns, or no turns.
    """
    decoded, encoding, confidence = decode(data, source_uri)
    payload, layout = _load(decoded.lstrip("\ufeff"), source_uri)
    turns, title, meta = _turns(payload, source_uri)
    check_limit(source_uri, "max_rows", len(turns), limits, "turns")
    chat = Document.from_turns(turns, source_uri=source_uri, title=title)
    metadata: dict[str, Any] = {
        "encoding": encoding,
        "encoding_confidence": confidence,
        "parser": LIBRARY,
        "layout": layout,
        "turn_count": len(turns),
        "speakers": sorted({speaker for speaker, _ in turns}),
    }
    if meta is not None:
        metadata["meta"] = meta
    # Reuse from_turns' layout, then version the document by the raw bytes like every parser.
    return build_document(
        raw=data,
        kind="chat",
        parser_version=PARSER_VERSION,
        source_uri=source_uri,
        text=chat.text,
        sections=chat.sections,
        title=title or title_from_uri(source_uri),
        metadata=metadata,
        turns=chat.turns,
    )
