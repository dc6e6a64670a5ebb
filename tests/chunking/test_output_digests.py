"""The section chunker's output, digested: every chunk of every sample document at four sizes
and two tokenizers, against digests taken before the speed work of issue 17.

Speed changes must not change a single chunk: this test holds every field of every chunk (all
but ``created_at``, which is the clock) to the digests in ``golden/section-digests.json``. After
an intended change of output, regenerate with ``UPDATE_GOLDEN=1`` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from chunking import SectionChunker, guess_kind, parse_bytes

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
DIGESTS = Path(__file__).resolve().parent / "golden" / "section-digests.json"
SIZES = (64, 200, 512, 1024)
TOKENIZERS = ("character", "cl100k_base")


def sample_documents() -> list:
    documents = []
    for path in sorted(SAMPLE.iterdir()):
        if path.is_file() and path.name != "README.md":
            data = path.read_bytes()
            kind = guess_kind(path, data[:4096])
            documents.append(parse_bytes(data, kind=kind, source_uri=f"sample://{path.name}"))
    return documents


def digests() -> dict[str, list]:
    documents = sample_documents()
    out: dict[str, list] = {}
    for tokenizer in TOKENIZERS:
        for size in SIZES:
            chunker = SectionChunker(chunk_size=size, tokenizer=tokenizer)
            digest, count = hashlib.sha256(), 0
            for document in documents:
                for chunk in chunker.chunk(document):
                    fields = chunk.model_dump(mode="json", exclude={"created_at"})
                    digest.update(json.dumps(fields, sort_keys=True).encode("utf-8"))
                    count += 1
            out[f"{tokenizer}/{size}"] = [count, digest.hexdigest()]
    return out


def test_section_chunks_of_the_samples_are_unchanged() -> None:
    actual = digests()
    if os.environ.get("UPDATE_GOLDEN"):
        DIGESTS.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(DIGESTS.read_text(encoding="utf-8"))
    assert len(expected) == len(TOKENIZERS) * len(SIZES)
    changed = [key for key in expected if actual[key] != expected[key]]
    assert not changed, f"chunks changed at {changed}"
