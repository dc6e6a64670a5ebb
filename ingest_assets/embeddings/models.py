"""Embedding models the pipeline can use, all offline: which exist, how to load one, its fingerprint.

No Dagster and no store here. A model is named by a spec string in ``plans.yaml``:

* ``wordllama:l2_supercat_<dim>`` (``dim`` 64, 128 or 256): WordLlama's static model whose
  256-d weights ship in the ``wordllama`` wheel; a smaller ``dim`` keeps the first ``dim``
  components (the model is trained for that, Matryoshka style). The default.
* ``chonkie:<Class>:<local path>``: a ``chonkie.embeddings`` class over a model on this
  machine (``Model2VecEmbeddings`` or ``SentenceTransformerEmbeddings``). Classes that call a
  web API, and names that are not a local folder, would need the network: they are refused.

Nothing here downloads anything. :func:`model_info` validates a spec and fingerprints it
without loading the weights (it runs at plan load); :func:`load_model` loads it once per
process (a worker embeds many batches with one load).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import itertools
import logging
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from chunking.ids import settings_hash
from chunking.plans import DEFAULT_EMBEDDING_MODEL

if TYPE_CHECKING:  # numpy comes with a model (a no-op ingest run loads none)
    import numpy as np

__all__ = [
    "DEFAULT_MODEL",
    "LOCAL_CHONKIE_CLASSES",
    "EmbeddingModel",
    "ModelError",
    "ModelInfo",
    "load_model",
    "model_info",
]

# The plans file's default model (chunking.plans.EmbeddingSpec).
DEFAULT_MODEL = DEFAULT_EMBEDDING_MODEL
# The chonkie classes that can run on a model folder of this machine, and the package each needs.
LOCAL_CHONKIE_CLASSES = {
    "Model2VecEmbeddings": "model2vec",
    "SentenceTransformerEmbeddings": "sentence-transformers",
}
_WORDLLAMA = re.compile(r"^wordllama:(?P<config>[a-z0-9_]+)_(?P<dim>\d+)$")
# The weights the wheel ships: WordLlama's l2_supercat at 256 dimensions.
_WORDLLAMA_SHIPPED = {"l2_supercat": 256}
_WORDLLAMA_DIMS = (64, 128, 256)


class ModelError(ValueError):
    """An embedding model spec is unknown, needs a download, or cannot load; the message says
    which and what to write instead."""


class EmbeddingModel(Protocol):
    """What the pipeline needs of a model: vectors for a batch of texts, in order."""

    dimension: int

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """One float32 row of :attr:`dimension` values per text, in order."""
        ...


@dataclass(frozen=True)
class ModelInfo:
    """A validated model spec and its fingerprint.

    ``fingerprint`` (16 hex) hashes the model name, its weights' identity (version), its
    dimension and the versions of the packages that compute it: vectors are stored under it,
    so changing any of these re-embeds and putting it back reuses.
    """

    spec: str
    kind: str  # "wordllama" or "chonkie"
    name: str
    dimension: int
    version: str
    packages: dict[str, str]

    @property
    def fingerprint(self) -> str:
        return settings_hash(
            {
                "name": self.name,
                "version": self.version,
                "dimension": self.dimension,
                "packages": self.packages,
            }
        )


def _package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _wordllama() -> Any:
    """The ``wordllama`` package, imported without the logging set-up its import does.

    Its modules call ``logging.basicConfig(level=INFO)`` at import: a process that imports it
    would print every library's INFO records to stderr (Dagster's database migrations on a new
    instance, for one). The root logger's handlers and level are put back as they were (a
    process that set up logging first is left alone by ``basicConfig`` anyway).
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return wordllama


def _wordllama_dir() -> Path:
    """The installed package's folder, found without importing it: describing a plan's model
    (its fingerprint, on every ``ingest run``) must not cost the import of numpy and requests
    that loading the model needs."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        return Path(_wordllama().__file__).resolve().parent  # ImportError names the package
    return Path(spec.origin).resolve().parent


@cache
def _file_digest(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def _wordllama_info(spec: str) -> ModelInfo:
    match = _WORDLLAMA.match(spec)
    if match is None:
        raise ModelError(f"model {spec!r}: write wordllama:<config>_<dim>, e.g. {DEFAULT_MODEL}")
    config, dim = match["config"], int(match["dim"])
    shipped = _WORDLLAMA_SHIPPED.get(config)
    version = _package_version("wordllama")
    if version is None:
        raise ModelError(f"model {spec!r}: the wordllama package is not installed (pip install wordllama)")
    if shipped is None or dim not in _WORDLLAMA_DIMS:
        raise ModelError(
            f"model {spec!r} would need a download (the wordllama wheel ships {DEFAULT_MODEL}, "
            f"usable at {', '.join(str(d) for d in _WORDLLAMA_DIMS)} dimensions); "
            "use one of wordllama:l2_supercat_64/_128/_256, or a chonkie class on a local model folder"
        )
    weights = _wordllama_dir() / "weights" / f"{config}_{shipped}.safetensors"
    try:
        stat = weights.stat()
    except OSError:
        raise ModelError(f"model {spec!r}: {weights} is missing; reinstall wordllama") from None
    return ModelInfo(
        spec=spec,
        kind="wordllama",
        name=f"wordllama:{config}",
        dimension=dim,
        version=_file_digest(weights, stat.st_size, stat.st_mtime_ns),
        packages={"wordllama": version},
    )


def _folder_digest(folder: Path) -> str:
    """The identity of a local model folder: its files' names, sizes and small config files."""
    parts: list[Any] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        parts.append([str(path.relative_to(folder)), stat.st_size])
        if path.suffix == ".json" and stat.st_size < 65536:
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return settings_hash(parts)


def _chonkie_info(spec: str) -> ModelInfo:
    _, _, rest = spec.partition(":")
    class_name, _, location = rest.partition(":")
    import chonkie.embeddings as chonkie_embeddings

    if not hasattr(chonkie_embeddings, class_name) or not class_name.endswith("Embeddings"):
        known = ", ".join(sorted(LOCAL_CHONKIE_CLASSES))
        raise ModelError(
            f"model {spec!r}: chonkie.embeddings has no class {class_name!r}; local ones: {known}"
        )
    if class_name not in LOCAL_CHONKIE_CLASSES:
        raise ModelError(
            f"model {spec!r}: {class_name} calls a model over the network (or downloads one), and "
            "runs here must not; use chonkie:Model2VecEmbeddings:<local folder> or "
            f"{DEFAULT_MODEL}"
        )
    folder = Path(location).expanduser()
    if not location or not folder.is_dir():
        raise ModelError(
            f"model {spec!r} would need a download: {location or '(no path)'!r} is not a folder on "
            f"this machine; download the model once and write chonkie:{class_name}:<its folder>"
        )
    package = LOCAL_CHONKIE_CLASSES[class_name]
    package_version = _package_version(package)
    if package_version is None:
        raise ModelError(f"model {spec!r}: {class_name} needs the {package} package (pip install {package})")
    model = load_model(spec)  # local: loading gives the dimension, and fails here if the folder is bad
    return ModelInfo(
        spec=spec,
        kind="chonkie",
        name=f"chonkie:{class_name}:{folder.name}",
        dimension=int(model.dimension),
        version=_folder_digest(folder.resolve()),
        packages={"chonkie": _package_version("chonkie") or "?", package: package_version},
    )


@cache
def model_info(spec: str) -> ModelInfo:
    """Validate a model spec and fingerprint it, without downloading anything.

    Raises:
        ModelError: The spec is unknown, would need a download or a network API, or its package
            is missing; the message says what to write instead.
    """
    if spec.startswith("wordllama:"):
        return _wordllama_info(spec)
    if spec.startswith("chonkie:"):
        return _chonkie_info(spec)
    raise ModelError(
        f"model {spec!r} is unknown: write {DEFAULT_MODEL} (ships with the project) or "
        "chonkie:<Class>:<local model folder>"
    )


class _WordLlama:
    """WordLlama's static model from the files its wheel ships (never downloads).

    A text's vector is what WordLlama's own ``embed(texts, norm=True)`` gives: the mean of its
    tokens' rows of the embedding matrix, scaled to unit length. It is computed here without
    WordLlama's padding: ``embed`` pads every text of a batch to the longest, gathers a
    (texts, longest, dimension) array and multiplies it by the padding mask, which is most of
    its time and memory; summing each text's own rows reads only the tokens it has. The float32
    additions are the same and in the same order (row after row; padding adds zeros), so the
    vectors are ``embed``'s to the bit (``tests/ingest/test_embeddings.py``). A text with no
    token gets the zero vector, where ``embed`` gives NaN.

    The files are the ones ``WordLlama.load`` reads (the wheel's weights and tokenizer), read
    here directly: its loader imports the package's download code and widens the float16
    weights with ``astype``, which takes most of a load, and every worker process loads the
    model. The widening here looks each float16 bit pattern up in a table that ``astype``
    itself made, so the float32 matrix is the same to the bit.
    """

    def __init__(self, config: str, dimension: int) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        package = _wordllama_dir()
        weights = package / "weights" / f"{config}_{_WORDLLAMA_SHIPPED[config]}.safetensors"
        with safe_open(str(weights), framework="np", device="cpu") as handle:
            half = handle.get_tensor("embedding.weight")[:, :dimension]  # float16
        widened = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
        self._matrix = widened[half.view(np.uint16)]  # float32, one row per token id
        # The model's tokenizer without the padding WordLlama turns on: each text's own ids.
        self._tokenizer = Tokenizer.from_file(str(package / "tokenizers" / f"{config}_tokenizer_config.json"))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self.dimension = dimension

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        # The same ids as encode_batch, without the character offsets it also works out.
        encodings = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        id_lists = [encoding.ids for encoding in encodings]
        lengths = [len(ids) for ids in id_lists]
        ids = np.fromiter(itertools.chain.from_iterable(id_lists), dtype=np.intp, count=sum(lengths))
        np.clip(ids, 0, self._matrix.shape[0] - 1, out=ids)  # as WordLlama does
        vectors = np.zeros((len(texts), self._matrix.shape[1]), dtype=np.float32)
        end = 0
        for row, length in enumerate(lengths):
            start, end = end, end + length
            if length:  # one text's rows at a time: they stay in the CPU's cache while summed
                np.sum(self._matrix[ids[start:end]], axis=0, out=vectors[row])
        vectors /= np.maximum(np.asarray(lengths, dtype=np.float32), 1.0)[:, None]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors


class _Chonkie:
    """A ``chonkie.embeddings`` class over a local model folder."""

    def __init__(self, class_name: str, folder: str) -> None:
        import chonkie.embeddings as chonkie_embeddings

        self._model = getattr(chonkie_embeddings, class_name)(folder)
        self.dimension = int(self._model.dimension)

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        vectors = self._model.embed_batch(list(texts))
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimension)


@cache
def load_model(spec: str) -> EmbeddingModel:
    """The model of ``spec``, loaded once per process.

    Raises:
        ModelError: As :func:`model_info`, or the local files do not load.
    """
    if spec.startswith("wordllama:"):
        info = model_info(spec)
        return _WordLlama(info.name.partition(":")[2], info.dimension)
    _, class_name, folder = spec.split(":", 2)
    try:
        return _Chonkie(class_name, str(Path(folder).expanduser()))
    except Exception as error:  # a broken folder or library: say which spec
        raise ModelError(f"model {spec!r} did not load from {folder!r}: {error}") from error
