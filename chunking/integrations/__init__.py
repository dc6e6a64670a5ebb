"""The project's parsers and chunkers where retrieval engineers already work: a LangChain
``TextSplitter`` (:mod:`chunking.integrations.langchain`) and a LlamaIndex ``NodeParser``
(:mod:`chunking.integrations.llamaindex`). Each module imports its library, which is optional
(``pip install langchain-text-splitters`` or ``llama-index-core``; both are in the ``bench``
extra); importing this package imports neither.
"""

from __future__ import annotations

from chunking.integrations.common import chunk_metadata, chunk_text

__all__ = ["chunk_metadata", "chunk_text"]
