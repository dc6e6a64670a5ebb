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
import re
import sys
import threading
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from chunking.errors import TokenizerError
from chunking.versions import package_version

__all__ = ["AVAILABLE_TOKENIZERS", "DEFAULT_TOKENIZER", "Tokenizer", "load_tokenizer"]

DEFAULT_TOKENIZER = "cl100k_base"
_BPE_NAMES = ("cl100k_base", "o200k_base")
AVAILABLE_TOKENIZERS: tuple[str, ...] = ("character", "word", *_BPE_NAMES)


@dataclass(frozen=True, eq=False)
class _Backend:
    """What counting needs, once loaded."""

    # Builds the chonkie tokenizer object; only chonkie's chunkers need it, and importing
    # chonkie (httpx, numpy) would otherwise land on every process that counts.
    make_chonkie: Callable[[], Any]
    count: Callable[[str], int]
    count_many: Callable[[Sequence[str]], list[int]]
    count_capped: Callable[[Sequence[str], int], list[int]]
    # seam(left, separator, right, left_starts_text) -> the join's extra tokens, or None.
    seam: Callable[[str, str, str, bool], int | None]


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
        self._chonkie: Any = None

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
        """The chonkie tokenizer object, for chonkie's chunkers (counts like :meth:`count`),
        made on first use."""
        wrapped = self._chonkie
        if wrapped is None:
            backend = self._ready()
            with _lock:
                if self._chonkie is None:
                    self._chonkie = backend.make_chonkie()
                wrapped = self._chonkie
        return wrapped

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

    def count_capped(self, texts: Sequence[str], limit: int) -> list[int]:
        """Return each text's count, or ``limit + 1`` for a text over ``limit`` tokens.

        Counting stops at the limit where the backend can (bpe-openai's ``count_till_limit``),
        so sizing units against a budget costs little for the ones far over it.
        """
        return self._ready().count_capped(texts, limit)

    def seam_function(self) -> Callable[[str, str, str, bool], int | None]:
        """:meth:`seam` as a plain function of ``(left, separator, right, left_starts_text)``, for
        loops that call it per unit (no method lookups on the way)."""
        return self._ready().seam

    def seam(self, left: str, separator: str, right: str, *, left_starts_text: bool = False) -> int | None:
        """Return what joining costs, counted at the seam only, or None when it cannot be.

        For any text ``before`` (the empty string when ``left_starts_text``), the result ``d``
        satisfies ``count(before + left + separator + right) == count(before + left) +
        count(right) + d``: a growing chunk's exact size follows from its pieces' counts without
        counting the chunk again. None means the seam cannot be counted locally (the ``word``
        tokenizer; a ``left`` with no word boundary near its end that does not start the text):
        the caller has to size the joined text another way (the section packer estimates it
        and counts the finished chunk once).
        """
        return self._ready().seam(left, separator, right, left_starts_text)


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
        identity = {"name": name, "backend": "chonkie", "chonkie": chonkie_version}
        return Tokenizer(name, identity, lambda: _from_chonkie(name))
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


def _from_chonkie(name: str) -> _Backend:
    # chonkie is imported when a tokenizer first counts, not with this module: its package
    # import (httpx, numpy; 0.4 s) would land on every command, a no-op `ingest run` included,
    # that only needs the tokenizers' identities (fingerprints).
    from chonkie.tokenizer import AutoTokenizer, CharacterTokenizer, WordTokenizer

    tokenizer = CharacterTokenizer() if name == "character" else WordTokenizer()
    wrapped = AutoTokenizer(tokenizer)
    characters = isinstance(tokenizer, CharacterTokenizer)
    # chonkie's character tokenizer counts len(text); call len directly (no wrapper frames).
    count = len if characters else wrapped.count_tokens

    def seam(left: str, separator: str, right: str, left_starts_text: bool) -> int | None:
        # Characters add up; words split on spaces, so a join can merge two words: recount.
        return len(separator) if characters else None

    return _Backend(
        make_chonkie=lambda: wrapped,
        count=count,
        count_many=lambda texts: list(map(count, texts)),
        # A test, not a min() call per text: every unit of a document is sized through this.
        count_capped=lambda texts, limit: [n if n <= limit else limit + 1 for n in map(count, texts)],
        seam=seam,
    )


@cache
def _counting_tiktoken() -> type:
    """chonkie's tiktoken adapter whose counts come from the given exact counter (the class is
    made on first use, with chonkie's import; see :func:`_from_chonkie`).

    chonkie's splitters only count (``count_tokens``); ``encode``/``decode`` (its last-resort
    token windows) stay tiktoken's, so chonkie and our own code count with the same function.
    """
    from chonkie.tokenizer import TiktokenAutoTokenizer

    class CountingTiktoken(TiktokenAutoTokenizer):  # type: ignore[misc, valid-type]
        def __new__(cls, encoding: Any, count: Callable[[str], int] | None = None) -> Any:
            if isinstance(encoding, cls):
                return encoding  # chonkie re-wraps with AutoTokenizer(self); keep the instance
            return object.__new__(cls)

        def __init__(self, encoding: Any, count: Callable[[str], int] | None = None) -> None:
            # AutoTokenizer(x) returns x as-is, then Python calls __init__(x) again: ignore that.
            if hasattr(self, "_count"):
                return
            super().__init__(encoding)
            self._count = count
            # The counter itself as this instance's count_tokens: chonkie calls it once per
            # split, and a method that only forwards would add a frame to every call.
            self.count_tokens = count  # type: ignore[method-assign]

        def count_tokens(self, text: str) -> int:
            return self._count(text)  # type: ignore[misc]

        def count_tokens_batch(self, texts: Sequence[str]) -> Sequence[int]:
            count = self._count
            return [count(t) for t in texts]  # type: ignore[misc]

    return CountingTiktoken


def _rust_tokenizer(name: str) -> Any:
    """bpe-openai's own Rust tokenizer for ``name`` (``count``, ``count_till_limit``), or None
    when unavailable.

    It counts without building a token list and is 2-3x faster than tiktoken's encode; its
    counts were checked equal to tiktoken's ``encode_ordinary`` on the whole shared corpus
    (documents, units and 125k random slices; see docs/benchmarks.md). The package's public
    API offers no count (its ``Encoding`` encodes to a list), so this takes the compiled module
    the package wraps, ``bpe_openai._bindings`` (typed by the package's ``_bindings.pyi``).

    Why not ``from bpe_openai import _bindings``: that runs the package's ``__init__`` first,
    whose ``bpe_openai.compat`` decodes every rank file the package ships, in Python, at
    import. Measured with bpe-openai 0.1.4 (process CPU time from start to a first count,
    three runs each on the loaded 2-CPU VM): 1.03-1.30 s through the package import, 45-51 ms
    through :func:`_load_bindings`; the Rust side reads its own copy of the ranks either way.
    """
    try:
        bindings = sys.modules.get("bpe_openai._bindings") or _load_bindings()
        if name not in bindings.supported_encodings():
            return None
        return bindings.tokenizer_for_encoding(name)
    except (ImportError, AttributeError, OSError, ValueError, RuntimeError):
        return None


def _load_bindings() -> Any:
    """``bpe_openai._bindings``, found by the import system in the package's folder (whatever
    its file's platform suffix) and loaded without running the package's ``__init__``.

    Raises:
        ImportError: bpe-openai is not installed, or has no such module.
    """
    package = importlib.util.find_spec("bpe_openai")  # finds the package; does not import it
    if package is None or not package.submodule_search_locations:
        raise ImportError("bpe-openai is not installed")
    spec = importlib.machinery.PathFinder.find_spec(
        "bpe_openai._bindings", package.submodule_search_locations
    )
    if spec is None or spec.loader is None:
        raise ImportError("bpe-openai has no compiled _bindings module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
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
    rust = _rust_tokenizer(name)
    if rust is None:

        def count(text: str) -> int:
            return len(encode(text))

        def count_capped(texts: Sequence[str], limit: int) -> list[int]:
            return [min(count(t), limit + 1) for t in texts]

    else:
        rust_count, rust_count_till = rust.count, rust.count_till_limit

        def count(text: str) -> int:
            try:
                return rust_count(text)
            except UnicodeEncodeError:  # lone surrogates: tiktoken replaces them, Rust refuses
                return len(encode(text))

        def capped(text: str, limit: int) -> int:
            try:
                tokens = rust_count_till(text, limit)
            except UnicodeEncodeError:
                return min(len(encode(text)), limit + 1)
            return limit + 1 if tokens is None else tokens

        def count_capped(texts: Sequence[str], limit: int) -> list[int]:
            over = limit + 1
            try:
                counts = [rust_count_till(text, limit) for text in texts]
            except UnicodeEncodeError:  # some text has a lone surrogate: one at a time
                return [capped(text, limit) for text in texts]
            return [over if tokens is None else tokens for tokens in counts]

    def count_many(texts: Sequence[str]) -> list[int]:
        # Serial on purpose: tiktoken's encode_ordinary_batch starts a new thread pool on every
        # call, which cost more than the counting itself for a document's units (profiled).
        return [count(t) for t in texts]

    return _Backend(
        make_chonkie=lambda: _counting_tiktoken()(encoding, count),
        count=count,
        count_many=count_many,
        count_capped=count_capped,
        seam=_BpeSeam(count).delta,
    )


# ----------------------------------------------------------------------------- BPE seams
#
# A BPE tokenizer first cuts text into pre-tokens with a regex, then encodes each pre-token on
# its own, so a text's count is the sum of its pre-tokens' counts. Joining two texts changes
# only the pre-tokens near the join. Both regexes offered here (cl100k_base, o200k_base) match
# runs of one class: letters (with marks, and ASCII contractions such as "'s", in o200k),
# digits (in groups of three), punctuation (swallowing following newlines), whitespace. So at a
# position ``p`` where ``text[p - 1]`` is a letter or digit and ``text[p]`` is none of those
# (nor a mark, nor an apostrophe), every match before ``p`` ends by ``p`` without reading past
# ``p + 1``, and a new match starts at ``p``. Such a "word end" splits the count exactly, in the
# text alone and in any text it is joined into. The seam is counted between the last word end
# of the left text and the first word end of the right text.

_SEAM_SEARCH = 256  # characters searched for a word end; past that, count more (still exact)
_ASCII_WORD_END = frozenset(' \t\n\r\f\v!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~')
_LINE_BREAKS = ("\n", "\r")
# ASCII punctuation but the apostrophe (which starts contractions such as "'s").
_ASCII_PUNCTUATION = frozenset('!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~')
_SHORT_TEXT = 32  # texts up to this length have their counts remembered
_SHORT_CACHE_SIZE = 1 << 16
# A letter or digit (``[^\W_]`` is exactly ``str.isalnum``) followed by an ASCII word end.
_ASCII_WORD_END_AFTER_ALNUM = re.compile("[^\\W_](?=[" + re.escape("".join(sorted(_ASCII_WORD_END))) + "])")


def _ends_word(char: str) -> bool:
    """True when a letter or digit run stops before ``char`` in both BPE regexes."""
    if char in _ASCII_WORD_END:
        return True
    return not char.isascii() and not char.isalnum() and not unicodedata.category(char).startswith("M")


class _BpeSeam:
    """Exact join costs for BPE tokenizers from short windows around the join."""

    def __init__(self, count: Callable[[str], int]) -> None:
        self._exact_count = count
        # Seam windows are short and repeat (".\n\nThe", "-", "|"): counts of short texts are
        # remembered, which costs a dict lookup instead of a call into the tokenizer.
        self._short: dict[str, int] = {}

    def _count(self, text: str) -> int:
        if len(text) > _SHORT_TEXT:
            return self._exact_count(text)
        tokens = self._short.get(text)
        if tokens is None:
            if len(self._short) >= _SHORT_CACHE_SIZE:
                self._short.clear()
            tokens = self._short[text] = self._exact_count(text)
        return tokens

    def delta(self, left: str, separator: str, right: str, left_starts_text: bool) -> int | None:
        count = self._count
        if not left or not right:
            # Only nothing joined to something is local; an empty side gives no word end.
            return 0 if not separator and not right else None
        if (
            separator
            and left[-1].isalnum()
            and separator[-1] in _LINE_BREAKS
            and separator.isspace()
            and not right[0].isspace()
        ):
            # The common join of a word and a paragraph: the whitespace is one pre-token
            # ending at a line break, and nothing else moves. (Its count is remembered: looked
            # up here, as _count would, without the call.)
            tokens = self._short.get(separator)
            return count(separator) if tokens is None else tokens
        first = right[0]
        if separator and not first.isspace() and first != "/" and not separator.strip("\r\n"):
            # The other common join: a sentence's final punctuation and line breaks. The
            # punctuation run (after a letter or digit) takes the line breaks into its pre-token
            # and the right text starts a new one (o200k would also take a leading "/").
            start = len(left)
            while start and left[start - 1] in _ASCII_PUNCTUATION:
                start -= 1
            if 0 < start < len(left) and left[start - 1].isalnum():
                tail = left[start:]
                return count(tail + separator) - count(tail)
        cut = _last_word_end(left, (separator or right)[0])
        if cut is None:
            if not left_starts_text:
                return None
            cut = 0
        head = _first_word_end(right)
        tail, lead = left[cut:], right[:head]
        return count(tail + separator + lead) - (count(tail) if tail else 0) - count(lead)


def _last_word_end(text: str, follower: str) -> int | None:
    """The largest word end ``p`` in ``text`` (``len(text)`` when ``follower`` ends the word),
    searched over the last few hundred characters; None when there is none."""
    position = len(text)
    after = follower
    stop = max(0, position - _SEAM_SEARCH)
    while position > stop:
        if text[position - 1].isalnum() and _ends_word(after):
            return position
        position -= 1
        after = text[position]
    return None


def _first_word_end(text: str) -> int:
    """The smallest word end in ``text`` past its first character, or ``len(text)``."""
    window = min(len(text), _SEAM_SEARCH + 1)
    # The ASCII word ends first (a regex, so fast); other scripts' punctuation one by one.
    found = _ASCII_WORD_END_AFTER_ALNUM.search(text, 0, window)
    if found is not None:
        return found.start() + 1
    for position in range(1, window - 1):
        if text[position - 1].isalnum() and _ends_word(text[position]):
            return position
    return len(text)
