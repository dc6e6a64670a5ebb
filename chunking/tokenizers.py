"""Tokenizers by name, loaded once, offline, through chonkie's tokenizer machinery.

``character`` and ``word`` are chonkie's own tokenizers. ``cl100k_base`` and ``o200k_base`` are
tiktoken encodings built from the BPE rank files that the ``bpe-openai`` package ships, so nothing
is downloaded at run time; chonkie wraps them like any tiktoken encoding. Any other name fails at
once with a :class:`~chunking.errors.TokenizerError` that lists the names that work (chonkie's own
loader would try a model-hub download first, which hangs or fails on an offline machine).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chonkie.tokenizer import AutoTokenizer, CharacterTokenizer, WordTokenizer

from chunking.errors import TokenizerError
from chunking.versions import package_version

__all__ = ["AVAILABLE_TOKENIZERS", "DEFAULT_TOKENIZER", "Tokenizer", "load_tokenizer"]

DEFAULT_TOKENIZER = "cl100k_base"
_BPE_NAMES = ("cl100k_base", "o200k_base")
AVAILABLE_TOKENIZERS: tuple[str, ...] = ("character", "word", *_BPE_NAMES)


@dataclass(frozen=True, eq=False)
class Tokenizer:
    """A loaded tokenizer: its name, identity for fingerprints, and fast counting.

    Attributes:
        name: The name it was loaded by.
        identity: Backend and version facts that change the counts (part of fingerprints).
        chonkie: The chonkie tokenizer object, for chonkie's chunkers.
        count: Return the number of tokens in one text.
        count_many: Return the counts of many texts (batched where the backend can).
    """

    name: str
    identity: dict[str, str]
    chonkie: Any = field(repr=False)
    count: Callable[[str], int] = field(repr=False)
    count_many: Callable[[Sequence[str]], list[int]] = field(repr=False)


_cache: dict[str, Tokenizer] = {}
_lock = threading.Lock()


def load_tokenizer(name: str) -> Tokenizer:
    """Return the tokenizer called ``name``, loading it on first use.

    Raises:
        TokenizerError: ``name`` is not one of :data:`AVAILABLE_TOKENIZERS`.
    """
    with _lock:
        tokenizer = _cache.get(name)
        if tokenizer is None:
            tokenizer = _cache[name] = _load(name)
        return tokenizer


def _load(name: str) -> Tokenizer:
    chonkie_version = package_version("chonkie")
    if name == "character":
        return _from_chonkie(name, CharacterTokenizer(), {"backend": "chonkie", "chonkie": chonkie_version})
    if name == "word":
        return _from_chonkie(name, WordTokenizer(), {"backend": "chonkie", "chonkie": chonkie_version})
    if name in _BPE_NAMES:
        return _load_bpe(name)
    raise TokenizerError(
        f"tokenizer {name!r} is not available offline; use one of: {', '.join(AVAILABLE_TOKENIZERS)}"
    )


def _from_chonkie(name: str, tokenizer: Any, identity: dict[str, str]) -> Tokenizer:
    wrapped = AutoTokenizer(tokenizer)
    count = wrapped.count_tokens
    return Tokenizer(
        name=name,
        identity={"name": name, **identity},
        chonkie=wrapped,
        count=count,
        count_many=lambda texts: [count(t) for t in texts],
    )


def _load_bpe(name: str) -> Tokenizer:
    import tiktoken
    from bpe_openai import registry

    spec = getattr(registry, name)()
    # No special tokens: documents may contain "<|endoftext|>" as plain text, and counting must
    # treat it as text instead of raising like tiktoken's encode() does.
    encoding = tiktoken.Encoding(
        name=f"{name}-offline",
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens={},
    )
    encode = encoding.encode_ordinary
    encode_batch = encoding.encode_ordinary_batch

    def count(text: str) -> int:
        return len(encode(text))

    def count_many(texts: Sequence[str]) -> list[int]:
        # tiktoken's batch call encodes on a thread pool outside the GIL.
        if len(texts) < 8:
            return [len(encode(t)) for t in texts]
        return [len(tokens) for tokens in encode_batch(list(texts))]

    return Tokenizer(
        name=name,
        identity={
            "name": name,
            "backend": "tiktoken",
            "tiktoken": package_version("tiktoken"),
            "ranks": f"bpe-openai {package_version('bpe-openai')}",
        },
        chonkie=AutoTokenizer(encoding),
        count=count,
        count_many=count_many,
    )
