"""The base every chunker shares: settings, fingerprint, tokenizer, placement and validation.

A chunker is a frozen pydantic model, and its fields are its settings: a strategy declares
``strategy: Literal["<name>"] = "<name>"`` (the tag of the plans file's union of chunkers,
:data:`chunking.chunkers.registry.RouteChunker`) and one field per setting, with its default and
bounds. Subclasses implement :meth:`BaseChunker._chunk`, which returns chunks in order with text,
provenance and ``metadata["token_count"]``; :meth:`chunk` then numbers them, names the chunker,
gives deterministic ids and checks the contract, so a strategy cannot hand out a chunk that
breaks it.

A setting that is renamed keeps its old name in :attr:`BaseChunker.renamed`: the old name is
still accepted (with a ``DeprecationWarning``), and fingerprints hash the setting under the old
name, so a rename never moves a fingerprint (and never re-chunks a stored set).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from chunking import versions
from chunking.chunk import Chunk, TextProvenance
from chunking.chunkers.schema_docs import document_fields, outside_caller
from chunking.document import Document
from chunking.errors import ChunkingError
from chunking.ids import settings_hash
from chunking.tokenizers import AVAILABLE_TOKENIZERS, DEFAULT_TOKENIZER, Tokenizer, load_tokenizer

__all__ = ["BaseChunker", "fingerprint_of", "fingerprinted_form"]


class BaseChunker(BaseModel, ABC):
    """A chunker: validated settings in, validated chunks out.

    Attributes:
        tokenizer: The name of the tokenizer that counts tokens (see ``chunking.tokenizers``).
    """

    # The JSON schema of a chunker (docs/plans.schema.json) takes each field's description
    # from the class docstring's Attributes and lists renamed settings as deprecated.
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=document_fields)

    if TYPE_CHECKING:
        # Each strategy declares it as a field: ``strategy: Literal["<name>"] = "<name>"``.
        strategy: str
    # Where the versions of the code paths this strategy runs come from (see
    # ``chunking.versions.resolve``); part of settings() and so of fingerprints.
    version_sources: ClassVar[Mapping[str, str]] = {}
    # Old name -> current name of each renamed setting. The old name is accepted with a
    # DeprecationWarning, and fingerprints hash the setting under it.
    renamed: ClassVar[Mapping[str, str]] = {}

    tokenizer: str = Field(default=DEFAULT_TOKENIZER, json_schema_extra={"enum": list(AVAILABLE_TOKENIZERS)})

    _tokenizer: Tokenizer = PrivateAttr()

    @field_validator("tokenizer")
    @classmethod
    def _tokenizer_loads(cls, name: str) -> str:
        """Load the tokenizer at construction, so a bad name fails here, fast, naming the field.

        Raises:
            pydantic.ValidationError: The name cannot be had offline (the message, from
                :class:`~chunking.errors.TokenizerError`, lists the names that work).
        """
        load_tokenizer(name)
        return name

    @model_validator(mode="before")
    @classmethod
    def _accept_old_names(cls, data: Any) -> Any:
        """Take a renamed setting under its old name, with a ``DeprecationWarning``.

        Raises:
            pydantic.ValidationError: Both the old and the current name are given.
        """
        if not cls.renamed or not isinstance(data, dict) or not cls.renamed.keys() & data.keys():
            return data
        data = dict(data)
        for old, new in cls.renamed.items():
            if old not in data:
                continue
            if new in data:
                raise ValueError(f"give {new!r} only: {old!r} is its old name")
            warnings.warn(
                f"{cls.__name__}: the setting {old!r} is now {new!r}; {old!r} is deprecated",
                DeprecationWarning,
                stacklevel=outside_caller(),
            )
            data[new] = data.pop(old)
        return data

    def model_post_init(self, context: Any) -> None:
        """Keep the loaded tokenizer (cached per process) for counting."""
        self._tokenizer = load_tokenizer(self.tokenizer)

    # ----------------------------------------------------------------------------- settings

    def settings(self) -> dict[str, Any]:
        """Return the strategy name and every setting as JSON-safe data.

        A setting that is itself a chunker appears as that chunker's settings; the tokenizer
        appears with its backend and version, and the code versions of the strategy are included,
        so an upgrade that changes the chunks also changes the fingerprint.
        """
        data: dict[str, Any] = {"strategy": self.strategy}
        for name in type(self).model_fields:
            value = getattr(self, name)
            data[name] = value.settings() if isinstance(value, BaseChunker) else value
        data["tokenizer"] = dict(self._tokenizer.identity)
        data["versions"] = self.code_versions()
        return data

    def fingerprint_settings(self) -> dict[str, Any]:
        """Return :meth:`settings` as fingerprints hash them (:func:`fingerprinted_form`)."""
        return fingerprinted_form(self.settings())

    def code_versions(self) -> dict[str, str]:
        """Return the versions of the code this chunker runs, read now from ``chunking.versions``."""
        return {key: versions.resolve(source) for key, source in self.version_sources.items()}

    def fingerprint(self) -> str:
        """Return 16 hex characters of a hash of :meth:`settings` (:func:`fingerprint_of`);
        equal settings, equal hash, however a setting is spelled."""
        return fingerprint_of(self.settings())

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the settings only: another process rebuilds the chunker (and loads its own
        tokenizer), so a chunker can be sent to a worker process."""
        return (_rebuild, (type(self), {name: getattr(self, name) for name in type(self).model_fields}))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """Copy the chunker, validating any changed setting.

        A plain copy keeps the fingerprint; a copy with changes is built again from its
        configuration, so a bad value raises ``pydantic.ValidationError`` like a constructor.
        """
        if not update:
            return super().model_copy(deep=deep)
        data = {name: getattr(self, name) for name in type(self).model_fields}
        data.update(update)
        return type(self).model_validate(data)

    # ----------------------------------------------------------------------------- tokens

    def count_tokens(self, text: str) -> int:
        """Return the number of tokens in ``text``, counted with this chunker's tokenizer."""
        return self._tokenizer.count(text)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Return the token counts of many texts (batched where the tokenizer can)."""
        return self._tokenizer.count_many(texts)

    # ----------------------------------------------------------------------------- chunking

    @abstractmethod
    def _chunk(self, document: Document) -> list[Chunk]:
        """Return the chunks of ``document`` in order; ids, indexes and names are set later."""

    @abstractmethod
    def _within_budget(self, chunk: Chunk) -> bool:
        """Return True when ``chunk`` respects this chunker's size budget."""

    def chunk(self, document: Document) -> list[Chunk]:
        """Split a document into chunks.

        Every chunk has non-empty text, indexes run from 0 without gaps, a chunk with text
        provenance lies inside the document (and, unless ``metadata["exact_slice"]`` is False,
        its text equals the document text at its offsets), every chunk is within budget, and
        ``chunker``/``chunker_hash``/``id`` are set. A strategy that sets ``chunker`` itself
        keeps its value.

        Raises:
            ChunkingError: The strategy returned chunks that break the contract, or the document
                cannot be chunked by this strategy.
        """
        chunks = self._chunk(document)
        fingerprint = self.fingerprint()
        make_id = Chunk.ids_for(document.id, document.version_id, fingerprint)
        strategy, title = self.strategy, document.title
        seen: Counter[tuple[int, str]] = Counter()  # (level, text) -> chunks named so far
        for index, chunk in enumerate(chunks):
            # The strategy's chunks are fresh objects of ours: set the placement in place.
            fields = chunk.__dict__
            fields["index"] = index
            fields["chunker_hash"] = fingerprint
            if fields["chunker"] is None:
                fields["chunker"] = strategy
            if fields["id"] is None:
                named = (fields["level"], fields["text"])
                fields["id"] = make_id(fields["provenance"], index, *named, seen[named])
                seen[named] += 1
            if title:
                fields["metadata"]["document_title"] = title
        self.validate_chunks(document, chunks)
        return chunks

    def validate_chunks(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """Check the chunk contract; raise :class:`ChunkingError` naming the document on a break."""
        where = document.source_uri
        text = document.text
        size = len(text)
        within_budget = self._within_budget
        expected_index: dict[int, int] = {}
        for chunk in chunks:
            fields = chunk.__dict__  # read once per chunk: the checks below read six fields
            chunk_text = fields["text"]
            if not chunk_text or chunk_text.isspace():  # what ``not chunk_text.strip()`` says
                raise self._broken(where, chunk, "has empty text; report this as a chunker bug")
            index, level = fields["index"], fields["level"]
            if index != expected_index.get(level, 0):
                raise self._broken(where, chunk, "breaks the index sequence 0..n-1 of its level")
            expected_index[level] = index + 1
            if fields["chunker"] is None or fields["chunker_hash"] is None:
                raise self._broken(where, chunk, "does not name its chunker and fingerprint")
            provenance = fields["provenance"]
            if isinstance(provenance, TextProvenance):
                start, end = provenance.start, provenance.end
                if not 0 <= start < end <= size:
                    raise self._broken(
                        where,
                        chunk,
                        f"spans {start}..{end}, outside the document text of length {size}",
                    )
                if fields["metadata"].get("exact_slice", True) and text[start:end] != chunk_text:
                    raise self._broken(where, chunk, "text differs from the document text at its offsets")
            if not within_budget(chunk):
                raise self._broken(
                    where,
                    chunk,
                    f"holds {chunk.metadata.get('token_count')} tokens, over its budget; "
                    "report this as a chunker bug",
                )

    def _broken(self, where: str, chunk: Chunk, what: str) -> ChunkingError:
        """The error for a chunk that breaks the contract (its label is made only then)."""
        label = f"{where}: chunk {chunk.index} (level {chunk.level}) from {self.strategy}"
        return ChunkingError(f"{label} {what}")


def _rebuild(kind: type[BaseChunker], settings: dict[str, Any]) -> BaseChunker:
    """Build a chunker again from its settings (the other half of ``BaseChunker.__reduce__``)."""
    return kind(**settings)


def fingerprint_of(settings: Mapping[str, Any]) -> str:
    """The fingerprint of a chunker's :meth:`~BaseChunker.settings` (a leveler's too), in either
    spelling: what ``fingerprint()`` of the chunker that gave them returns, also for settings
    stored before a rename. 16 hex characters of :func:`chunking.ids.settings_hash`."""
    return settings_hash(fingerprinted_form(settings))


def fingerprinted_form(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` with every renamed setting under its old name (:attr:`BaseChunker.renamed`
    of the chunker its ``strategy`` names), in nested chunkers' settings too: the form
    fingerprints hash, so a rename never moves one."""
    renamed = {new: old for old, new in _renames().get(settings.get("strategy"), {}).items()}
    return {
        renamed.get(key, key): fingerprinted_form(value)
        if isinstance(value, Mapping) and "strategy" in value
        else value
        for key, value in settings.items()
    }


def _renames() -> dict[Any, Mapping[str, str]]:
    """Each strategy's :attr:`BaseChunker.renamed`, from the chunker classes defined so far."""
    found: dict[Any, Mapping[str, str]] = {}
    classes = [BaseChunker]
    while classes:
        kind = classes.pop()
        classes.extend(kind.__subclasses__())
        field = kind.model_fields.get("strategy")
        if field is not None and kind.renamed:
            found[field.default] = kind.renamed
    return found
