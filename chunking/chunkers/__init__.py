"""Chunkers: recursive (span), section, turn-window, and parent/child leveling."""

from chunking.chunkers.base import BaseChunker
from chunking.chunkers.leveling import ParentChildChunker, restrict_to_parent
from chunking.chunkers.recursive import RecursiveChunker, TextPiece
from chunking.chunkers.registry import CHUNKER_TYPES, chunker_from_settings
from chunking.chunkers.section import SectionChunker
from chunking.chunkers.turns import TurnWindowChunker

__all__ = [
    "CHUNKER_TYPES",
    "BaseChunker",
    "ParentChildChunker",
    "RecursiveChunker",
    "SectionChunker",
    "TextPiece",
    "TurnWindowChunker",
    "chunker_from_settings",
    "restrict_to_parent",
]
