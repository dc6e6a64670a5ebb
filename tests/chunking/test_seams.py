"""Counting shortcuts: a join's cost counted near the join equals counting the joined text,
and counts capped at a budget are exact below it.

The section chunker sizes a growing chunk from its pieces' counts plus these seams, without
counting the chunk again, so a wrong seam would be a wrong ``token_count`` (and maybe a chunk over
budget). The texts are built from the characters that move BPE pre-token boundaries: letters of
both cases, digits, apostrophes and contractions, punctuation, every kind of whitespace, CJK,
combining marks and emoji.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import load_tokenizer
from tests.example_budget import examples

PIECES = st.sampled_from(
    [
        "a",
        "Z",
        "word",
        "Word",
        "WORD",
        "it's",
        "'s",
        "'ll",
        "’",
        "'",
        "1",
        "1234",
        "3.14",
        ".",
        ",",
        "...",
        "!?",
        "(",
        ")",
        "-",
        "—",
        "#",
        "|",
        "/",
        "\\",
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\r\n",
        "\u00a0",
        "\u3000",
        "日本語",
        "。",
        "、",
        "e\u0301",
        "\u0301",
        "🙂",
        "👩‍💻",
        "ß",
        "ǅ",
        "٣",
    ]
)
TEXT = st.lists(PIECES, max_size=12).map("".join)
NONEMPTY = st.lists(PIECES, min_size=1, max_size=12).map("".join)
SEPARATORS = st.sampled_from(["", "\n", "\n\n", "\r\n\r\n", "\n \n", " ", "\t", "\n\n  ", "  \n\n"])


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "character"])
@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=TEXT, left=NONEMPTY, separator=SEPARATORS, right=NONEMPTY, starts=st.booleans())
def test_seam_equals_counting_the_joined_text(
    name: str, before: str, left: str, separator: str, right: str, starts: bool
) -> None:
    tokenizer = load_tokenizer(name)
    if starts:
        before = ""
    delta = tokenizer.seam(left, separator, right, left_starts_text=starts)
    if delta is None:
        assert not starts, "a left text that starts the text always has a seam"
        return
    joined = tokenizer.count(before + left + separator + right)
    assert joined == tokenizer.count(before + left) + tokenizer.count(right) + delta


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_seam_of_prose_is_found_near_the_join(name: str) -> None:
    """Typical paragraphs have a word end close to the join: the seam is always local."""
    tokenizer = load_tokenizer(name)
    left = "A long paragraph of prose ends here, as paragraphs do."
    right = "The next one starts (with a parenthesis) and goes on."
    before = "Title\n\n" * 3
    delta = tokenizer.seam(left, "\n\n", right)
    assert delta is not None
    assert tokenizer.count(before + left + "\n\n" + right) == (
        tokenizer.count(before + left) + tokenizer.count(right) + delta
    )


def test_word_tokenizer_asks_for_a_recount() -> None:
    assert load_tokenizer("word").seam("two words", "\n\n", "and more") is None


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "character", "word"])
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(TEXT, max_size=6), limit=st.integers(min_value=0, max_value=12))
def test_capped_counts_are_exact_up_to_the_limit(name: str, texts: list[str], limit: int) -> None:
    tokenizer = load_tokenizer(name)
    assert tokenizer.count_capped(texts, limit) == [min(tokenizer.count(t), limit + 1) for t in texts]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_capped_counts_take_lone_surrogates(name: str) -> None:
    # Text from a broken decode can hold a lone surrogate, which the Rust counter refuses: such
    # a batch is counted one text at a time, the same counts as count() gives.
    tokenizer = load_tokenizer(name)
    texts = ["plain words", "broken \ud800 here", "many broken \udc00 words " * 20, ""]
    counts = tokenizer.count_capped(texts, 12)
    assert counts == [min(tokenizer.count(t), 13) for t in texts]
    assert counts[1] <= 12 and counts[2] == 13  # one under the cap, one over
