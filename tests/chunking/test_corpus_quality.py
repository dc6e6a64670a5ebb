"""Issue 17 on the real corpus: the counts a retrieval engineer looks at, reported and held.

Slow (every corpus file, both levels of the default plan); skipped when ../shared/corpus is
absent, as the other corpus tests are. The counts are those of
:mod:`tests.chunking.corpus_quality`; ``-n 0 -s`` shows them (xdist workers keep what they print).
"""

from __future__ import annotations

import json

import pytest

from tests.chunking.corpus_quality import CORPUS, chunk_corpus, measure

# The module's tests share one measure of the corpus: one worker runs them.
pytestmark = pytest.mark.xdist_group("chunking-corpus-quality")


@pytest.fixture(scope="module")
def counts() -> dict[str, int]:
    if not CORPUS.is_dir():
        pytest.skip(f"no corpus at {CORPUS}")
    result = measure(chunk_corpus())
    print("\ncorpus counts:", json.dumps(result, sort_keys=True))
    return result


@pytest.mark.slow
def test_corpus_table_children_carry_column_names(counts: dict[str, int]) -> None:
    assert counts["table_children"] > 0
    assert counts["table_children_named"] >= 0.98 * counts["table_children"], counts
    assert counts["table_header_only"] == 0, counts


@pytest.mark.slow
def test_corpus_prose_children_start_sentences(counts: dict[str, int]) -> None:
    assert counts["prose_children"] > 0
    assert counts["prose_mid_sentence"] <= 0.05 * counts["prose_children"], counts


@pytest.mark.slow
def test_corpus_has_no_heading_only_chunks(counts: dict[str, int]) -> None:
    assert counts["heading_only"] == 0, counts


@pytest.mark.slow
def test_corpus_chat_children_keep_to_turns_and_name_speakers(counts: dict[str, int]) -> None:
    assert counts["chat_children"] > 0
    assert counts["chat_children_on_turns"] >= 0.98 * counts["chat_children"], counts
    assert counts["chat_children_with_speakers"] >= 0.98 * counts["chat_children"], counts


@pytest.mark.slow
def test_corpus_contextual_texts_have_balanced_fences(counts: dict[str, int]) -> None:
    assert counts["odd_fence_contextual"] == 0, counts


@pytest.mark.slow
def test_corpus_cjk_text_is_not_cut_mid_word(counts: dict[str, int]) -> None:
    assert counts["cjk_mid_word_cuts"] == 0, counts


@pytest.mark.slow
def test_corpus_cjk_children_cut_inside_a_line_end_after_a_stop(counts: dict[str, int]) -> None:
    # Where a child of Chinese or Japanese text is cut inside a line with a 。！？ near its end,
    # the cut is right after a stop (issue 30: 90%).
    assert counts["cjk_children_cut_near_stop"] > 0
    assert counts["cjk_children_cut_at_stop"] >= 0.9 * counts["cjk_children_cut_near_stop"], counts
