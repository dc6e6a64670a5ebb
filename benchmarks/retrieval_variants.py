"""Chunker variants against the peers of one ``run.py`` result, in seconds instead of minutes.

``../shared/retrieval/run.py`` chunks and scores every peer each time (about 3 minutes on a quiet
VM); the peers are deterministic, so a variant of the project's chunkers can be scored against
the peers' per-question recall stored in a full run's JSON. Each variant is a Python expression
building a chunker, with ``chunking``, ``S`` (the size) and ``U`` (the tokenizer name) in scope::

    .venv/bin/python benchmarks/retrieval_variants.py benchmarks/results/retrieval-issue30-pass2.json \\
        'base=chunking.SectionChunker(size=S, tokenizer=U)' \\
        'cohesion=chunking.SectionChunker(size=S, tokenizer=U, cohesion=True)'

Per size and retriever it prints recall within 2,000 characters, the paired difference from the
best peer of that size with its 95% bootstrap interval (run.py's arithmetic and seed), and recall
by corpus; then per variant the mean of the six differences and how many cells are ahead (interval
above zero). Every cell and variant is resampled with the same draws of questions, so two
variants' intervals differ by their recall alone (drawn afresh per cell, the same chunker listed
twice got 0/6 and 1/6 cells ahead). The retrieval and metric code is run.py's own, imported from ``--run``.

``--distinct`` scores every chunker, the peers too (chunked here, the cluster-semantic one
included), with each chunk whose text repeats an earlier chunk of its corpus left out of the
index. The finance corpus repeats whole filings (67 of its 97 questions have a reference whose
text occurs more than once; the reference is always the first occurrence), so a chunker that
cuts both copies alike indexes two identical chunks with one score, and which of them ranks
first is up to ``numpy.argpartition``: the later copy wastes the character budget and scores
nothing. A chunker whose boundaries drift between the copies scores by which copy embeds
nearer. Leaving the repeats out for every chunker measures the chunkers without that coin.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT.parent / "shared" / "retrieval" / "run.py"
BUDGET = 2000


def _load_run(path: Path):
    spec = importlib.util.spec_from_file_location("retrieval_run", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PEERS = (
    "chonkie Recursive",
    "chonkie Token",
    "langchain RecursiveCharacter",
    "semchunk",
    "bench RecursiveToken",
    "bench FixedToken",
)
_CLUSTER = "bench ClusterSemantic (wordllama)"


def _peer(run, env, name: str, size: int, unit: str):
    """run.py's peer ``name`` at ``size`` (its own factories), or None for one it has not."""
    if name == "chonkie Recursive":
        return run.chonkie_chunker(env, "recursive", size, unit)
    if name == "chonkie Token":
        return run.chonkie_chunker(env, "token", size, unit)
    if name == "langchain RecursiveCharacter":
        return run.langchain_chunker(env, size, unit)
    if name == "semchunk":
        return run.semchunk_chunker(env, size, unit)
    if name == "bench RecursiveToken":
        return run.bench_chunker(env, "recursive", size, unit)
    if name == "bench FixedToken":
        return run.bench_chunker(env, "fixed", size, unit)
    if name == _CLUSTER:
        return run.bench_chunker(env, "cluster", size, unit)
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", help="a run.py result (JSON) holding the peers")
    ap.add_argument("variants", nargs="+", help="name=expression")
    ap.add_argument("--sizes", default="200 tok,400 tok,800 char")
    ap.add_argument("--run", default=str(RUN), help="path of run.py")
    ap.add_argument(
        "--distinct",
        action="store_true",
        help="leave out of every index (peers chunked here too) each chunk repeating an earlier one",
    )
    args = ap.parse_args()
    run = _load_run(Path(args.run))
    sys.path.insert(0, str(ROOT))
    import chunking

    base = json.loads(Path(args.base).read_text())
    env = run.Env(ROOT)
    corpora, questions = run.load_data()
    qvec = env.embed([q["question"] for q in questions])
    documents = {name: chunking.parse_file(run.DATA / "corpora" / f"{name}.md") for name in corpora}
    # One set of resampled questions for every cell and variant (seed 0, run.py's), so two
    # variants' intervals differ by their recall only, not by which resample each one drew.
    resample = np.random.default_rng(0).integers(0, len(questions), size=(2000, len(questions)))
    key_recall = f"_per_question_recall@{BUDGET}c"
    summary: list[tuple[str, float, float]] = []

    def index(runner) -> dict[str, list]:
        """Chunk every corpus with ``runner`` and place its chunks, as run.py's main loop does."""
        chunks: dict[str, list] = {"corpus": [], "start": [], "end": [], "text": []}
        stats: Counter[str] = Counter()
        for corpus, raw in corpora.items():
            pieces = runner(corpus, raw, {})
            if args.distinct:
                seen: set[str] = set()
                pieces = [p for p in pieces if not (p["text"] in seen or seen.add(p["text"]))]
            need = [p for p in pieces if p.get("start") is None]
            for piece, found in zip(need, run.locate(raw, [p["text"] for p in need], stats), strict=True):
                piece["start"], piece["end"] = found if found else (None, None)
            for piece in pieces:
                located = piece["start"] is not None
                chunks["corpus"].append(corpus if located else run.UNMAPPED)
                chunks["start"].append(piece["start"] if located else 0)
                chunks["end"].append(piece["end"] if located else len(piece["text"]))
                chunks["text"].append(piece["text"])
        return chunks

    def scores(chunks: dict[str, list]) -> dict[str, dict]:
        vectors = env.embed(chunks["text"])
        ranked = {
            "wordllama": run.top_ranked(qvec @ vectors.T, 200),
            "bm25": run.BM25(chunks["text"]).rank([q["question"] for q in questions], 200),
        }
        return {key: run.evaluate(questions, chunks, order, 5, [BUDGET]) for key, order in ranked.items()}

    def project_runner(chunker):
        def runner(corpus: str, raw: str, info: dict) -> list[dict]:
            document = documents[corpus]
            made = [c for c in chunker.chunk(document) if getattr(c, "level", 0) == 0]
            same = document.text == raw
            pieces = [
                {
                    "text": c.text,
                    "pos": c.provenance.start,
                    "start": c.provenance.start if same else None,
                    "end": c.provenance.end if same else None,
                }
                for c in made
            ]
            return sorted(pieces, key=lambda p: p["pos"])

        return runner

    peers_of: dict[str, list[tuple[str, dict]]] = {}

    def peers(size: str) -> list[tuple[str, dict]]:
        """The peers of ``size``: from the base run, or chunked and scored here (run.py's peers
        but the cluster-semantic one, and that one too with ``--distinct``) for a size the base
        run does not hold or with ``--distinct``."""
        if size not in peers_of:
            stored = [
                p for p in base["results"] if p["group"] == "peer" and p["size"] == size and not args.distinct
            ]
            if stored:
                peers_of[size] = [(p["chunker"], p["retrievers"]) for p in stored]
            else:
                number, unit = size.split()
                made = []
                for name in (*_PEERS, _CLUSTER) if args.distinct else _PEERS:
                    runner = _peer(run, env, name, int(number), unit)
                    if runner is not None and (unit == "tok" or name not in ("bench FixedToken", _CLUSTER)):
                        made.append((name, scores(index(runner))))
                peers_of[size] = made
        return peers_of[size]

    for variant in args.variants:
        name, expression = variant.split("=", 1)
        for size in args.sizes.split(","):
            number, unit = size.split()
            tokenizer = "cl100k_base" if unit == "tok" else "character"
            chunker = eval(expression, {"chunking": chunking, "S": int(number), "U": tokenizer})
            started = time.perf_counter()
            chunks = index(project_runner(chunker))
            seconds = time.perf_counter() - started
            tokens = env.cl100k.count_many(chunks["text"])
            results = scores(chunks)
            line = f"{name:24s} {size:9s} n={len(tokens):5d} tok={np.mean(tokens):6.1f} t={seconds:4.1f}s"
            for key, result in results.items():
                ours = np.asarray(result[key_recall])
                best_name, best = max(peers(size), key=lambda p: np.mean(p[1][key][key_recall]))
                diff = ours - np.asarray(best[key][key_recall])
                boots = diff[resample].mean(axis=1)
                low, high = np.percentile(boots, [2.5, 97.5])
                by_corpus = result[f"recall@{BUDGET}c_by_corpus"]
                line += (
                    f" | {key} {100 * ours.mean():4.1f} d{100 * diff.mean():+4.1f}"
                    f"[{100 * low:+.1f},{100 * high:+.1f}] vs {best_name}"
                    f" ({'/'.join(f'{100 * by_corpus[c]:.0f}' for c in sorted(by_corpus))})"
                )
                summary.append((name, 100 * diff.mean(), 100 * low))
            print(line, flush=True)
    for name in dict.fromkeys(s[0] for s in summary):
        rows = [s for s in summary if s[0] == name]
        ahead = sum(1 for s in rows if s[2] > 0)
        mean = np.mean([s[1] for s in rows])
        print(f"{name:24s} mean difference {mean:+.2f}, cells ahead {ahead}/{len(rows)}")


if __name__ == "__main__":
    main()
