"""The contract of ``Chunk.metadata``: which keys the chunkers set, of what type, and who reads
them.

:class:`ChunkMetadata` is a ``TypedDict``: at run time ``Chunk.metadata`` stays a plain dict
(the chunkers build it once per chunk, on the hot path, and the store writes it as JSON with
sorted keys, so its stored form is the dict itself), while a type checker holds every key set
or read to its declared type, and ``Chunk(...)`` validates the declared keys' types. Keys not
declared here are allowed (a caller's own facts travel with a chunk), but this library sets and
reads only these; ``tests/chunking/test_chunk_metadata.py`` checks both.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

__all__ = ["METADATA_KEYS", "ChunkMetadata"]


@with_config(ConfigDict(extra="allow"))
class ChunkMetadata(TypedDict, total=False):
    """Facts about a chunk beside its fields; every key is optional.

    Attributes:
        token_count: Tokens in the chunk's text, by its chunker's tokenizer: every chunk a
            chunker makes has it; the budget check and the store's ``token_count`` read it.
        exact_slice: False when the text is not ``Document.text[start:end]`` (a table row group
            repeating its header, rows rendered as cells, pieces joined by a blank line where
            the parser dropped something). Absent means True.
        document_title: The document's title, set when the chunk is placed;
            ``contextual_text`` puts it in front of the heading path.
        repeated_header: The table header a row group repeats in front of its rows.
        rendering: ``"columns"``: table rows written as ``column: value`` lines.
        fence_open: The opening fence line (with the language) that a part of a split code
            block lacks; ``contextual_text`` puts it back.
        fence_close: The closing fence line such a part lacks.
        context_before: The end of the chunk before (the section chunker's ``overlap``), in
            ``contextual_text`` only.
        turn_tokens: A turn window's size: the sum of its turns' counts (its budget check).
        turn_start: The number of the first chat turn in the chunk (from 0, in the document).
        turn_end: The number of the last chat turn in the chunk.
        speakers: The speakers of those turns, each once, in order.
        continues_turn: The speaker of the turn a chunk starts inside (a part of a split turn
            after its first); ``contextual_text`` puts it in front.
    """

    token_count: int
    exact_slice: bool
    document_title: str
    repeated_header: str
    rendering: Literal["columns"]
    fence_open: str
    fence_close: str
    context_before: str
    turn_tokens: int
    turn_start: int
    turn_end: int
    speakers: list[str]
    continues_turn: str


METADATA_KEYS: frozenset[str] = frozenset(ChunkMetadata.__annotations__)
