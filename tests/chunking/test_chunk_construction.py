"""Models made without validation (``Chunk.made``, ``TextProvenance.at``, ``PageProvenance.of``)
are what ``model_construct`` makes of the same values: fields, fields set, extra and private
state, and they copy, pickle, dump and validate like any other."""

from __future__ import annotations

import copy
import pickle
import uuid
from datetime import UTC, datetime

from chunking import Chunk, PageProvenance, TextProvenance


def _state(model: object) -> dict:
    return model.__getstate__()  # type: ignore[attr-defined]


def _made() -> Chunk:
    return Chunk.made(
        document_id=uuid.UUID(int=7),
        text="Some text.",
        provenance=TextProvenance.at(3, 13),
        heading_path=["A", "B"],
        content_kind="text",
        metadata={"token_count": 3, "exact_slice": True},
        created_at=datetime(2026, 1, 2, tzinfo=UTC),
    )


def test_made_equals_model_construct() -> None:
    made = _made()
    values = dict(made.__dict__)
    built = Chunk.model_construct(set(Chunk.model_fields), **values)
    assert _state(made) == _state(built)
    assert made == built and made.model_fields_set == set(Chunk.model_fields)
    assert _state(TextProvenance.at(1, 5)) == _state(
        TextProvenance.model_construct({"start", "end"}, start=1, end=5)
    )
    assert _state(PageProvenance.of((2, 3))) == _state(
        PageProvenance.model_construct({"pages"}, pages=(2, 3))
    )


def test_made_objects_are_ordinary_models() -> None:
    made = _made()
    assert Chunk.model_validate(made.model_dump()) == made
    assert pickle.loads(pickle.dumps(made)) == made
    changed = made.model_copy(update={"index": 4})
    assert changed.index == 4 and made.index == 0
    assert copy.deepcopy(made) == made
    assert made.model_dump(mode="json")["provenance"] == {"kind": "text", "start": 3, "end": 13}


def test_made_objects_do_not_share_their_fields() -> None:
    first, second = _made(), _made()
    first.metadata["token_count"] = 99
    assert second.metadata["token_count"] == 3 and first.__dict__ is not second.__dict__
    assert TextProvenance.at(0, 1).__dict__ is not TextProvenance.at(0, 1).__dict__
