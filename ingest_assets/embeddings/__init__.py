"""Embeddings of child chunks: the offline models, the text each mode embeds, its hash.

No Dagster and no store here (the engine's ``embed`` step uses these). A vector is stored
under (the SHA-256 of the text embedded, the model's fingerprint), so a text embedded once under
a model is never embedded again, whatever plan, document or run asks for it.

=============  ==================================================================
module         job
=============  ==================================================================
``models``     model specs, offline loading, fingerprints
``texts``      the embedding config of a plan, the text a chunk embeds, its hash
=============  ==================================================================
"""

from ingest_assets.embeddings.models import (
    DEFAULT_MODEL,
    EmbeddingModel,
    ModelError,
    ModelInfo,
    load_model,
    model_info,
)
from ingest_assets.embeddings.texts import (
    TEXT_MODES,
    EmbeddingPlan,
    embedded_row_text,
    embedded_text,
    text_hash,
)

__all__ = [
    "DEFAULT_MODEL",
    "TEXT_MODES",
    "EmbeddingModel",
    "EmbeddingPlan",
    "ModelError",
    "ModelInfo",
    "embedded_row_text",
    "embedded_text",
    "load_model",
    "model_info",
    "text_hash",
]
