"""The claim verifier on the seven held-out human-labelled sets, against the floors and the rules.

python -m tests.bench.verifier_quality                 # up to 1,000 items per set, by group
python -m tests.bench.verifier_quality --all           # every item
python -m tests.bench.verifier_quality --model PATH    # another exported int8 ONNX file
python -m tests.bench.verifier_quality --no-rules      # skip the (slow) rules judge

The sets of ``../shared/benchmarks`` are never trained on (the verifier learns from
``../shared/training/nli``), so every figure here is held out and cross-dataset. Each item is
read as the product reads it (``engine.verifier.decide``): the evidence is split into
sentences, the embedder ranks them for each claim sentence, the verifier reads the best
sentences alone and the 3-sentence window around the best; a multi-sentence claim is supported
as much as its least supported sentence. Question-answer items (TruthfulQA, HaluEval) are one
claim, the question followed by the answer.

Per set: AUROC of P(supported), supported vs rest, for the verifier, the lexical floor (share of
the claim's content words in the source, the sets' README), plain MiniLM max-cosine (claim vs
the evidence sentences; on long sources, the 24 sentences sharing most words with it) and
today's ``rules`` judge (the local judge without a verifier); WiCE macro-F1 (supported vs not)
and DialFact 3-way macro-F1; calibration; selective accuracy of the low-confidence routing.
Project venv only (numpy, onnxruntime, tokenizers): no torch.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.scoring.judging import CONFIDENCE_BAR  # noqa: E402
from engine.text import split_sentences  # noqa: E402
from engine.verifier.decide import Decision, decide_many, rank  # noqa: E402
from engine.verifier.evidence import content_words, relevance, words  # noqa: E402
from engine.verifier.model import CrossEncoderVerifier  # noqa: E402
from training.verifier.metrics import auroc  # noqa: E402

BENCH = ROOT.parent / "shared" / "benchmarks"
SETS = (
    "wice_claims",
    "wice_spans",
    "truthfulqa",
    "begin_wow",
    "summedits_sales",
    "dialfact_small",
    "halueval_qa",
)
SUPPORTED, CONTRADICTED, NOT_SUPPORTED, UNSUPPORTED = 0, 1, 2, 3
PRESELECT = 24
"""Evidence sentences (most shared words first) the embedder ranks per claim."""


@dataclass
class Case:
    """One benchmark item as the verifier reads it."""

    set: str
    id: str
    group: str
    sentences: list[str]
    claims: list[str]
    label: int
    source: str
    claim_text: str
    prefix: str = ""
    decisions: list[Decision] = field(default_factory=list)


def _jsonl(path: Path) -> list[dict]:  # type: ignore[type-arg]
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def sentences_of(texts: Sequence[str]) -> list[str]:
    """Sentences of every text (a text without a sentence end is one sentence)."""
    out: list[str] = []
    for text in texts:
        for line in text.split("\n"):
            parts = [s.text for s in split_sentences(line)] or (
                [line.strip()] if line.strip() else []
            )
            out.extend(parts)
    return out


def claim_sentences(text: str) -> list[str]:
    return [s.text for s in split_sentences(text)] or [text.strip()]


LABEL = {
    "supported": SUPPORTED,
    "contradicted": CONTRADICTED,
    "not_supported": NOT_SUPPORTED,
    "unsupported": UNSUPPORTED,
}


def load(name: str) -> list[Case]:
    """Every item of one set as ``Case``s (wice_spans: one case per response sentence)."""
    out: list[Case] = []
    if name == "wice_claims":
        for o in _jsonl(BENCH / name / "items.jsonl"):
            ctx = [c for c in o["context"] if c.strip()]
            lab = SUPPORTED if o["label"] == "SUPPORTED" else LABEL["not_supported"]
            out.append(
                Case(name, o["id"], o["meta"]["claim_title"], sentences_of(ctx),
                     claim_sentences(o["claim"]), lab, "\n".join(ctx), o["claim"])
            )  # fmt: skip
    elif name == "wice_spans":
        for o in _jsonl(BENCH / name / "items.jsonl"):
            ctx = [c for c in o["context"] if c.strip()]
            spans = o["hallucinated_spans"]
            for k, s in enumerate(split_sentences(o["response"])):
                bad = any(a < s.end and s.start < b for a, b in spans)
                out.append(
                    Case(name, f"{o['id']}-{k}", o["id"], sentences_of(ctx), [s.text],
                         UNSUPPORTED if bad else SUPPORTED, "\n".join(ctx), s.text)
                )  # fmt: skip
    elif name == "truthfulqa":
        for o in _jsonl(BENCH / name / "items.jsonl"):
            claim = f"{o['question'].strip()} {o['response'].strip()}"
            out.append(
                Case(name, o["id"], o["question"], sentences_of([o["reference"]]), [claim],
                     SUPPORTED if o["label"] == "correct" else UNSUPPORTED, o["reference"], claim)
            )  # fmt: skip
    else:
        for o in _jsonl(BENCH / name / f"{name}.jsonl"):
            if name == "halueval_qa":
                claims = [f"{o['question'].strip()} {o['claim'].strip()}"]
            else:
                claims = claim_sentences(o["claim"])
            out.append(
                Case(name, o["id"], o["group"], sentences_of([o["source"]]), claims,
                     LABEL[o["label"]], o["source"], " ".join(claims))
            )  # fmt: skip
    return out


def sample(cases: list[Case], cap: int, seed: int = 7) -> list[Case]:
    """Whole groups in a seeded order until ``cap`` cases (all when fewer)."""
    if len(cases) <= cap:
        return cases
    groups = sorted({c.group for c in cases})
    random.Random(seed).shuffle(groups)
    size: dict[str, int] = {}
    for c in cases:
        size[c.group] = size.get(c.group, 0) + 1
    keep: set[str] = set()
    n = 0
    for g in groups:
        if n >= cap:
            break
        keep.add(g)
        n += size[g]
    return [c for c in cases if c.group in keep]


def macro_f1(pred: npt.ArrayLike, gold: npt.ArrayLike, classes: Sequence[int]) -> float:
    p, g = np.asarray(pred), np.asarray(gold)
    out = []
    for c in classes:
        tp = int(np.sum((p == c) & (g == c)))
        fp = int(np.sum((p == c) & (g != c)))
        fn = int(np.sum((p != c) & (g == c)))
        out.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(out))


def lexical(case: Case) -> float:
    c = content_words(case.claim_text)
    s = set(words(case.source))
    return sum(w in s for w in c) / max(1, len(c))


class Ranker:
    """Embedding ranks of evidence sentences (lexically preselected), vectors cached."""

    def __init__(self) -> None:
        from engine.embedders.local import LocalEmbedder

        self.embedder = LocalEmbedder()
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}

    def embed(self, texts: Sequence[str]) -> None:
        todo = sorted({t for t in texts if t not in self.vectors})
        for i in range(0, len(todo), 512):
            part = todo[i : i + 512]
            for t, v in zip(part, np.asarray(self.embedder.embed(part)), strict=True):
                self.vectors[t] = v

    def preselect(self, claim: str, sentences: Sequence[str]) -> list[int]:
        if len(sentences) <= PRESELECT:
            return list(range(len(sentences)))
        lex = relevance(claim, sentences)
        return sorted(sorted(range(len(sentences)), key=lambda i: -lex[i])[:PRESELECT])

    def order(self, claim: str, sentences: Sequence[str]) -> tuple[list[int], float]:
        """Sentences by cosine (preselected first), and the best cosine."""
        pre = self.preselect(claim, sentences)
        if not pre:
            return [], 0.0
        c = self.vectors[claim]
        cos = np.full(len(sentences), -1.0)
        for i in pre:
            cos[i] = float(self.vectors[sentences[i]] @ c)
        return rank(claim, sentences, cos), float(cos.max())


class Recorded:
    """A verifier that answers from a table filled by one batched call (``fill``)."""

    def __init__(self, inner: CrossEncoderVerifier) -> None:
        self.inner = inner
        self.table: dict[tuple[str, str], npt.NDArray[np.float64]] = {}
        self.wanted: set[tuple[str, str]] = set()
        self.name = inner.name
        self.pays_per_pair = inner.pays_per_pair

    def predict(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        out = np.zeros((len(pairs), 3))
        for k, pair in enumerate(pairs):
            if pair in self.table:
                out[k] = self.table[pair]
            else:
                self.wanted.add(pair)
                out[k] = (0.0, 0.0, 1.0)
        return out

    def fill(self) -> float:
        todo = sorted(self.wanted - set(self.table))
        t0 = time.perf_counter()
        probs = self.inner.predict(todo)
        for pair, p in zip(todo, probs, strict=True):
            self.table[pair] = p
        self.wanted.clear()
        return len(todo) / max(1e-9, time.perf_counter() - t0)


def item_probs(decisions: Sequence[Decision]) -> tuple[float, float, float]:
    """A multi-sentence claim: supported as its least supported sentence, contradicted as its
    most contradicted one."""
    s = min(d.supported for d in decisions)
    c = min(max(d.contradicted for d in decisions), 1.0 - s)
    return s, c, max(0.0, 1.0 - s - c)


def rules_scores(cases: Sequence[Case], ranker: Ranker) -> tuple[np.ndarray, np.ndarray]:
    """Today's default judge (rules and combiner, no verifier): P(supported) and the 3-way
    verdict of each case (its least supported claim sentence)."""
    from engine.judges.local.judge import LocalJudge

    judge = LocalJudge(ranker.embedder)
    p_out, v_out = [], []
    code = {"SUPPORTED": 0, "CONTRADICTED": 1, "NOT_ENOUGH_INFO": 2}
    for case in cases:
        ctx = case.sentences
        if len(ctx) > 200:
            ctx = [ctx[i] for i in ranker.preselect(case.claim_text, ctx)[:200]]
        judged = [judge.judged(c, ctx) for c in case.claims]
        p_out.append(min(p for _, p in judged))
        verdicts = [code[v.verdict] for v, _ in judged]
        v_out.append(1 if 1 in verdicts else 0 if all(v == 0 for v in verdicts) else 2)
    return np.asarray(p_out), np.asarray(v_out)


def evaluate(
    name: str, cases: list[Case], verifier: Recorded, ranker: Ranker, rules: bool, guards: bool
) -> dict:  # type: ignore[type-arg]
    t0 = time.perf_counter()
    ranker.embed([c for case in cases for c in [*case.claims, case.claim_text]])
    for case in cases:
        for claim in {*case.claims, case.claim_text}:
            ranker.embed([case.sentences[i] for i in ranker.preselect(claim, case.sentences)])
    t_embed = time.perf_counter() - t0
    orders: list[list[list[int]]] = []
    cosine = []
    for case in cases:
        orders.append([ranker.order(c, case.sentences)[0] for c in case.claims])
        cosine.append(ranker.order(case.claim_text, case.sentences)[1])
    for case, order in zip(cases, orders, strict=True):
        decide_many(verifier, case.claims, case.sentences, order, case.prefix)
    rate = verifier.fill()
    for case, order in zip(cases, orders, strict=True):
        case.decisions = decide_many(
            verifier, case.claims, case.sentences, order, case.prefix, guards=guards
        )
    probs = np.asarray([item_probs(c.decisions) for c in cases])
    y = np.asarray([c.label for c in cases])
    pos = y == SUPPORTED
    row: dict = {  # type: ignore[type-arg]
        "n": len(cases),
        "verifier": auroc(probs[:, 0], pos),
        "lexical": auroc([lexical(c) for c in cases], pos),
        "cosine": auroc(cosine, pos),
        "pairs_per_s": round(rate, 1),
        "embed_s": round(t_embed, 1),
    }
    verdict = probs.argmax(1)
    if rules:
        t1 = time.perf_counter()
        p_rules, v_rules = rules_scores(cases, ranker)
        row["rules"] = auroc(p_rules, pos)
        row["rules_s"] = round(time.perf_counter() - t1, 1)
    if name == "wice_claims":
        row["f1_verifier"] = macro_f1(verdict == 0, pos, [0, 1])
        row["f1_cosine_0.75"] = macro_f1(np.asarray(cosine) >= 0.75, pos, [0, 1])
        if rules:
            row["f1_rules"] = macro_f1(v_rules == 0, pos, [0, 1])
    if name == "dialfact_small":
        row["f1_3way_verifier"] = macro_f1(verdict, y, [0, 1, 2])
        if rules:
            row["f1_3way_rules"] = macro_f1(v_rules, y, [0, 1, 2])
    # binary verdict (supported iff P >= 0.5), its confidence, and the low-confidence routing
    binary = probs[:, 0] >= 0.5
    conf = np.maximum(probs[:, 0], 1 - probs[:, 0])  # the certainty of the binary verdict
    right = binary == pos
    flagged = conf < CONFIDENCE_BAR
    row["accuracy"] = float(right.mean())
    row["flagged_share"] = float(flagged.mean())
    row["accuracy_unflagged"] = float(right[~flagged].mean()) if (~flagged).any() else float("nan")
    row["accuracy_flagged"] = float(right[flagged].mean()) if flagged.any() else float("nan")
    for bar in (0.6, 0.7, 0.8, 0.9):
        low = conf < bar
        row[f"at_{bar}"] = [
            round(float(low.mean()), 3),
            round(float(right[~low].mean()), 3) if (~low).any() else None,
            round(float(right[low].mean()), 3) if low.any() else None,
        ]
    edges = np.linspace(0.5, 1.0, 11)
    ece = 0.0
    for lo, hi in itertools.pairwise(edges):
        sel = (conf >= lo) & ((conf < hi) | (hi == 1.0))
        if sel.any():
            ece += sel.mean() * abs(conf[sel].mean() - right[sel].mean())
    row["ece"] = ece
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--cap", type=int, default=1000)
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--calibration", type=Path, default=None)
    ap.add_argument("--no-rules", action="store_true")
    ap.add_argument("--no-guards", action="store_true", help="the model alone, no guards")
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    a = ap.parse_args()
    inner = CrossEncoderVerifier(model_path=a.model, calibration_path=a.calibration)
    verifier = Recorded(inner)
    ranker = Ranker()
    print(f"verifier {inner.version}, temperature {inner.temperature:.3f}", flush=True)
    result: dict = {}  # type: ignore[type-arg]
    for name in a.sets:
        cases = load(name)
        got = cases if a.all else sample(cases, a.cap)
        t0 = time.perf_counter()
        row = evaluate(name, got, verifier, ranker, not a.no_rules, not a.no_guards)
        row["seconds"] = round(time.perf_counter() - t0, 1)
        result[name] = row
        shown = {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}
        print(name, json.dumps(shown), flush=True)
    sets = list(result)
    mean = {
        k: float(np.mean([result[s][k] for s in sets])) for k in ("verifier", "lexical", "cosine")
    }
    mean["better_floor"] = float(
        np.mean([max(result[s]["lexical"], result[s]["cosine"]) for s in sets])
    )
    if not a.no_rules:
        mean["rules"] = float(np.mean([result[s]["rules"] for s in sets]))
        mean["sets_beating_rules"] = sum(result[s]["verifier"] > result[s]["rules"] for s in sets)
    result["mean"] = mean
    print("mean", json.dumps(mean), flush=True)
    if a.out:
        a.out.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
