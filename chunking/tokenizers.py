"""Tokenizers by name, loaded once, offline, through chonkie's tokenizer machinery.

``character`` and ``word`` are chonkie's own tokenizers. ``cl100k_base`` and ``o200k_base`` are
tiktoken encodings built from the BPE rank files that the ``bpe-openai`` package ships, so nothing
is downloaded at run time; chonkie wraps them like any tiktoken encoding. Their counts come from
bpe-openai's Rust counter (same ranks, same counts, 2-3x faster than tiktoken's encode; tiktoken is
the fallback), and chonkie's adapter counts with that same function. Any other name fails at
once with a :class:`~chunking.errors.TokenizerError` that lists the names that work (chonkie's own
loader would try a model-hub download first, which hangs or fails on an offline machine).

A name is checked when it is asked for; the BPE rank files are read on the first count, so
building chunkers, settings and fingerprints (a plan file, a no-op pipeline run) costs nothing.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chonkie.tokenizer import AutoTokenizer, CharacterTokenizer, TiktokenAutoTokenizer, WordTokenizer

from chunking.errors import TokenizerError
from chunking.versions import package_version

__all__ = ["AVAILABLE_TOKENIZERS", "DEFAULT_TOKENIZER", "Tokenizer", "load_tokenizer"]

DEFAULT_TOKENIZER = "cl100k_base"
_BPE_NAMES = ("cl100k_base", "o200k_base")
AVAILABLE_TOKENIZERS: tuple[str, ...] = ("character", "word", *_BPE_NAMES)


@dataclass(frozen=True, eq=False)
class _Backend:
    """What counting needs, once loaded."""

    chonkie: Any
    count: Callable[[str], int]
    count_many: Callable[[Sequence[str]], list[int]]


class Tokenizer:
    """A tokenizer by name: its identity for fingerprints, and exact counting.

    Attributes:
        name: The name it was asked for by.
        identity: Backend and version facts that change the counts (part of fingerprints),
            known without loading anything.
    """

    def __init__(self, name: str, identity: dict[str, str], load: Callable[[], _Backend]) -> None:
        self.name = name
        self.identity = identity
        self._load = load
        self._backend: _Backend | None = None

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r})"

    def _ready(self) -> _Backend:
        backend = self._backend
        if backend is None:
            with _lock:
                if self._backend is None:
                    self._backend = self._load()
                backend = self._backend
        return backend

    @property
    def chonkie(self) -> Any:
        """The chonkie tokenizer object, for chonkie's chunkers (counts like :meth:`count`)."""
        return self._ready().chonkie

    @property
    def encoding(self) -> Any:
        """The underlying tokenizer object (for BPE names, tiktoken's ``Encoding``), to hand to
        other libraries so they count with the very same tokenizer."""
        inner = self.chonkie.tokenizer
        return inner.real() if isinstance(inner, _LazyEncoding) else inner

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        return self._ready().count(text)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Return the token count of each text."""
        return self._ready().count_many(texts)


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
    if name in ("character", "word"):
        kind = CharacterTokenizer if name == "character" else WordTokenizer
        identity = {"name": name, "backend": "chonkie", "chonkie": chonkie_version}
        return Tokenizer(name, identity, lambda: _from_chonkie(kind()))
    if name in _BPE_NAMES:
        identity = {
            "name": name,
            # Counts come from bpe-openai's Rust crate (tiktoken's encode when it cannot be had:
            # the same counts); tiktoken encodes for chonkie's token windows. Both are named, so
            # either upgrade moves the fingerprints.
            "backend": "bpe-openai",
            "bpe-openai": package_version("bpe-openai"),
            "tiktoken": package_version("tiktoken"),
        }
        return Tokenizer(name, identity, lambda: _load_bpe(name))
    raise TokenizerError(
        f"tokenizer {name!r} is not available offline; use one of: {', '.join(AVAILABLE_TOKENIZERS)}"
    )


def _from_chonkie(tokenizer: Any) -> _Backend:
    wrapped = AutoTokenizer(tokenizer)
    # chonkie's character tokenizer counts len(text); call len directly (no wrapper frames).
    count = len if isinstance(tokenizer, CharacterTokenizer) else wrapped.count_tokens
    return _Backend(chonkie=wrapped, count=count, count_many=lambda texts: [count(t) for t in texts])


class _CountingTiktoken(TiktokenAutoTokenizer):
    """chonkie's tiktoken adapter whose counts come from the given exact counter.

    chonkie's splitters only count (``count_tokens``); ``encode``/``decode`` (its last-resort
    token windows) stay tiktoken's, so chonkie and our own code count with the same function.
    """

    def __new__(cls, encoding: Any, count: Callable[[str], int] | None = None) -> _CountingTiktoken:
        if isinstance(encoding, _CountingTiktoken):
            return encoding  # chonkie re-wraps with AutoTokenizer(self); keep the instance
        return object.__new__(cls)

    def __init__(self, encoding: Any, count: Callable[[str], int] | None = None) -> None:
        # AutoTokenizer(x) returns x as-is, then Python calls __init__(x) again: ignore that.
        if hasattr(self, "_count"):
            return
        super().__init__(encoding)
        self._count = count

    def count_tokens(self, text: str) -> int:
        return self._count(text)

    def count_tokens_batch(self, texts: Sequence[str]) -> Sequence[int]:
        count = self._count
        return [count(t) for t in texts]


def _rust_counter(name: str) -> Callable[[str], int] | None:
    """bpe-openai's own Rust counter for ``name``, or None when unavailable.

    It counts without building a token list and is 2-3x faster than tiktoken's encode; its
    counts were checked equal to tiktoken's ``encode_ordinary`` on the whole shared corpus
    (documents, units and 125k random slices; see docs/benchmarks.md). The extension module is
    loaded from its file: importing the ``bpe_openai`` package first would decode every rank
    file it ships in Python (half a second per process) though the Rust side has its own.
    """
    try:
        bindings = sys.modules.get("bpe_openai._bindings") or _load_bindings()
        if name not in bindings.supported_encodings():
            return None
        return bindings.tokenizer_for_encoding(name).count
    except (ImportError, AttributeError, OSError, ValueError, RuntimeError, StopIteration):
        return None


def _load_bindings() -> Any:
    package = importlib.util.find_spec("bpe_openai")
    if package is None or not package.submodule_search_locations:
        raise ImportError("bpe-openai is not installed")
    library = next(Path(package.submodule_search_locations[0]).glob("_bindings*.so"))
    loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(library))
    spec = importlib.util.spec_from_file_location("bpe_openai._bindings", library, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class _LazyEncoding:
    """tiktoken's Encoding for a BPE name, built on first use.

    Only chonkie's last-resort token windows encode and decode; counting never needs it.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._encoding: Any = None

    def real(self) -> Any:
        """The tiktoken ``Encoding`` itself."""
        return self._get()

    def _get(self) -> Any:
        if self._encoding is None:
            import tiktoken
            from bpe_openai import registry

            spec = getattr(registry, self._name)()
            # No special tokens: documents may contain "<|endoftext|>" as plain text, and it
            # must count as text instead of raising like tiktoken's encode() does.
            self._encoding = tiktoken.Encoding(
                name=f"{self._name}-offline",
                pat_str=spec["pat_str"],
                mergeable_ranks=spec["mergeable_ranks"],
                special_tokens={},
            )
        return self._encoding

    def encode(self, text: str) -> list[int]:
        return self._get().encode_ordinary(text)

    def encode_ordinary(self, text: str) -> list[int]:
        return self._get().encode_ordinary(text)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self._get().encode_ordinary_batch(list(texts))

    def decode(self, tokens: Sequence[int]) -> str:
        return self._get().decode(tokens)

    def decode_batch(self, batch: Sequence[Sequence[int]]) -> list[str]:
        return self._get().decode_batch(batch)


def _load_bpe(name: str) -> _Backend:
    encoding = _LazyEncoding(name)
    encode = encoding.encode_ordinary
    rust_count = _rust_counter(name)
    if rust_count is None:

        def count(text: str) -> int:
            return len(encode(text))

    else:

        def count(text: str) -> int:
            try:
                return rust_count(text)
            except UnicodeEncodeError:  # lone surrogates: tiktoken replaces them, Rust refuses
                return len(encode(text))

    def count_many(texts: Sequence[str]) -> list[int]:
        # Serial on purpose: tiktoken's encode_ordinary_batch starts a new thread pool on every
        # call, which cost more than the counting itself for a document's units (profiled).
        return [count(t) for t in texts]

    return _Backend(chonkie=_CountingTiktoken(encoding, count), count=count, count_many=count_many)
