"""The BPE tokenizers count with bpe-openai's compiled module, loaded without the package's
``__init__`` (which decodes every rank file in Python; see ``chunking.tokenizers._rust_tokenizer``)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from chunking.tokenizers import _rust_tokenizer, load_tokenizer
rust = _rust_tokenizer("cl100k_base")
assert rust is not None and rust.count("hello world") == 2
assert load_tokenizer("cl100k_base").count("hello world") == 2
print(sorted(m for m in sys.modules if m.startswith("bpe_openai")))
"""


def test_counting_loads_the_compiled_module_alone() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bpe_openai._bindings']"  # not the package, not its compat


CHONKIE_PROBE = """
import sys
from chunking.tokenizers import load_tokenizer
tokenizer = load_tokenizer("cl100k_base")
assert tokenizer.count("hello world") == 2 and tokenizer.count_capped(["hello world"], 1) == [2]
before = "chonkie" in sys.modules
assert tokenizer.chonkie.count_tokens("hello world") == 2  # made on first use, counting alike
print(before, "chonkie" in sys.modules)
"""


def test_counting_leaves_chonkie_unimported_until_a_chonkie_chunker_asks() -> None:
    # Importing chonkie (httpx, numpy) costs every process that only counts; only the recursive
    # chunker, which is chonkie's, needs its tokenizer object.
    out = subprocess.run([sys.executable, "-c", CHONKIE_PROBE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False True"
