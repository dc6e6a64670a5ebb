"""chunking: documents in, fingerprinted chunks out. A plain library; it never imports dagster.

from chunking import Document, ParentChildChunker, SectionChunker, RecursiveChunker
doc = Document.from_text(open("notes.txt").read(), source_uri="file:///notes.txt")
leveled = ParentChildChunker(parent=SectionChunker(chunk_size=1024), child=RecursiveChunker(chunk_size=256))
for chunk in leveled.chunk(doc):
    print(chunk.level, chunk.index, chunk.provenance, chunk.text[:40])
"""

from chunking.chunk import (
    Chunk,
    ChunkMetadata,
    ContentKind,
    NodeRecord,
    PageProvenance,
    Provenance,
    TextProvenance,
)
from chunking.chunkers import (
    CHUNKER_TYPES,
    BaseChunker,
    ParentChildChunker,
    RecursiveChunker,
    SectionChunker,
    TextPiece,
    TurnWindowChunker,
    chunker_from_settings,
)
from chunking.document import Document, Section, Span, Turn, Unit
from chunking.errors import ChunkingError, IngestError, LimitExceeded, ParseError, TokenizerError
from chunking.parsers import KINDS, ParseLimits, guess_kind, parse_bytes, parse_file
from chunking.tokenizers import AVAILABLE_TOKENIZERS, DEFAULT_TOKENIZER, load_tokenizer

__all__ = [
    "AVAILABLE_TOKENIZERS",
    "CHUNKER_TYPES",
    "DEFAULT_TOKENIZER",
    "KINDS",
    "BaseChunker",
    "Chunk",
    "ChunkMetadata",
    "ChunkingError",
    "ContentKind",
    "Document",
    "IngestError",
    "LimitExceeded",
    "NodeRecord",
    "PageProvenance",
    "ParentChildChunker",
    "ParseError",
    "ParseLimits",
    "Provenance",
    "RecursiveChunker",
    "Section",
    "SectionChunker",
    "Span",
    "TextPiece",
    "TextProvenance",
    "TokenizerError",
    "Turn",
    "TurnWindowChunker",
    "Unit",
    "chunker_from_settings",
    "guess_kind",
    "load_tokenizer",
    "parse_bytes",
    "parse_file",
]
