"""What ``evalhouse testset from-pages | from-logs | accept`` do, behind the CLI.

Each returns the lines to print (the report goes to standard error; nothing is printed to
standard output but the written file's path). Output is native JSONL that ``evalhouse
run`` reads unchanged, or a review CSV (``--review``) that ``accept`` turns into one.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.settings import Paths
from engine.testsets.build import generate as G, logs as L
from engine.testsets.build.grounding import Unsupported, check_drafts, unsupported_summary
from engine.testsets.build.pages import read_pages, read_url_list
from engine.testsets.build.review import accept_review, summary, write_jsonl, write_review


class BuildError(InputError):
    """Bad options of a ``testset`` command."""


@dataclass(frozen=True)
class Destination:
    """Where the cases go: a test set, or a review file to edit first."""

    output: Path | None
    review: Path | None

    def write(self, cases: Sequence[Any]) -> list[str]:
        """Write the cases; the report lines saying where."""
        if self.review is not None:
            sidecar = write_review(self.review, cases)
            return [
                f"review file: {self.review} (drafts kept in {sidecar.name})",
                f"edit it (keep=no drops a row), then: evalhouse testset accept {self.review} "
                "--output testset.jsonl",
            ]
        assert self.output is not None
        write_jsonl(self.output, cases)
        return [f"wrote {summary(cases)} to {self.output}"]


def destination(output: Path | None, review: Path | None) -> Destination:
    """Exactly one of ``--output`` and ``--review``."""
    if (output is None) == (review is None):
        raise BuildError(
            "give --output FILE.jsonl (a test set) or --review FILE.csv (to edit first)"
        )
    return Destination(output, review)


def _embedder(spec: str, paths: Paths) -> Any:
    from engine.embedders.factory import build_embedder

    return build_embedder(spec, paths.cache)


def _styles(text: str | None) -> tuple[str, ...]:
    if not text:
        return G.STYLES
    styles = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    unknown = [s for s in styles if s not in G.STYLES]
    if unknown or not styles:
        raise BuildError(f"--styles {text!r}: unknown style(s) {', '.join(unknown) or '(none)'} "
                         f"(styles: {', '.join(G.STYLES)})")  # fmt: skip
    return styles


def from_pages(
    paths: Paths,
    sources: Sequence[Path],
    dest: Destination,
    *,
    count: int = 30,
    styles: str | None = None,
    seed: int = 0,
    judge: str = "local",
    embedder: str = "local",
    urls: Path | None = None,
    base_url: str | None = None,
    domain: str = "",
    dedupe_threshold: float = G.DEDUPE_THRESHOLD,
    estimate: bool = False,
    instructions: str = "",
) -> list[str]:
    """Generate cases from pages; with an LLM ``judge`` the model words them (steered by
    ``instructions``) and the cases whose answer the passages do not support are dropped."""
    if count < 1:
        raise BuildError(f"--count {count}: must be at least 1")
    if instructions.strip() and judge == "local":
        raise BuildError(
            "--instructions steers an LLM writer: give --judge openai:MODEL (or another LLM); "
            "the offline generator has no prompt to steer"
        )
    chosen_styles = _styles(styles)
    started = time.perf_counter()
    pages = read_pages(sources, urls=read_url_list(urls) if urls else None, base_url=base_url)
    embed = _embedder(embedder, paths).embed
    report = [
        f"pages: {len(pages)} read, {sum(len(p.chunks) for p in pages)} chunks",
    ]
    writer = None
    if judge != "local":
        from engine.testsets.build.llm_writer import LlmWriter, estimate_writing

        if estimate:
            drafts, _, _ = G.plan_drafts(
                pages, count=count, styles=chosen_styles, seed=seed, embed=embed,
                threshold=dedupe_threshold,
            )  # fmt: skip
            cost = estimate_writing(drafts, judge, instructions=instructions)
            return [
                *report,
                f"LLM calls:     {cost.calls:,} ({judge}; cached replies cost nothing)",
                f"tokens:        {cost.input_tokens:,} in / {cost.output_tokens:,} out",
                f"cost:          ${cost.cost_usd:.4f}",
            ]
        writer = LlmWriter(_llm_client(judge, paths), instructions=instructions)
    elif estimate:
        return [*report, "offline generator: no LLM calls, no cost"]
    unsupported: list[Unsupported] = []

    def written_and_checked(drafts: list[G.Draft]) -> tuple[list[G.Draft], list[str]]:
        from engine.verifier import default_verifier  # the model loads only when it checks

        assert writer is not None
        written, failed = writer.rewrite(drafts)
        kept, dropped = check_drafts(default_verifier(), written)
        unsupported.extend(dropped)
        return kept, failed

    made = G.generate(
        pages, count=count, styles=chosen_styles, seed=seed, embed=embed, domain=domain,
        threshold=dedupe_threshold, rewrite=written_and_checked if writer else None,
    )  # fmt: skip
    if not made.cases:
        raise BuildError("no case could be generated: the pages state no checkable facts")
    seconds = time.perf_counter() - started
    per_style = ", ".join(
        f"{s} {sum(1 for c in made.cases if c.metadata['style'] == s)}" for s in chosen_styles
    )
    report.append(f"cases: {len(made.cases)} ({per_style}) in {seconds:.1f}s")
    report.append(f"near-duplicates dropped: {made.duplicates}")
    why_short = "the pages ran out" + (", or answers were dropped" if unsupported else "")
    for style, missing in made.short.items():
        report.append(f"note: {missing} fewer {style} cases than asked ({why_short})")
    for line in made.failed:
        report.append(f"skipped: {line}")
    if writer is not None:
        report.append(unsupported_summary(unsupported))
        report.extend(f"dropped: {u.line()}" for u in unsupported)
        usage = writer.usage
        report.append(
            f"LLM: {usage.calls} calls, {usage.input_tokens:,} in / {usage.output_tokens:,} out, "
            f"${usage.cost_usd:.4f}"
        )
    return report + dest.write(made.cases)


def _llm_client(spec: str, paths: Paths) -> Any:
    from engine.embedders.keyword import KeywordEmbedder
    from engine.judges.base import JudgeError
    from engine.judges.factory import build_judge

    try:
        judge = build_judge(spec, embedder=KeywordEmbedder(), cache_dir=paths.cache)
    except JudgeError as exc:
        raise BuildError(f"--judge {spec}: {exc}") from exc
    client = getattr(judge, "client", None)
    if client is None:
        raise BuildError(f"--judge {spec}: not an LLM judge")
    return client


def from_logs(
    paths: Paths,
    log: Path,
    dest: Destination,
    *,
    pages: Sequence[Path] = (),
    per_group: int = 5,
    seed: int = 0,
    embedder: str = "local",
    threshold: float = L.CLUSTER_THRESHOLD,
) -> list[str]:
    """Cluster, sample and ground a query log; report coverage."""
    if per_group < 1:
        raise BuildError(f"--per-group {per_group}: must be at least 1")
    entries, skipped = L.read_log(log)
    if not entries:
        raise BuildError(f"{log}: no queries in the log")
    embed = _embedder(embedder, paths).embed
    clusters, duplicates = L.cluster(entries, embed, threshold)
    chosen = L.sample(clusters, per_group, seed)
    if pages:
        chunks = [c for p in read_pages(pages) for c in p.chunks]
        L.attach_ground_truth(chosen, chunks, embed)
    cases = [L.to_case(c, i) for i, c in enumerate(chosen, start=1)]
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):  # log ids repeated across clusters: number them instead
        cases = [c.model_copy(update={"id": f"log-{i:04d}"}) for i, c in enumerate(cases, 1)]
    report = [
        f"log: {len(entries)} queries read" + (f", {len(skipped)} rows skipped" if skipped else ""),
        *(f"skipped: {s}" for s in skipped[:20]),
        f"exact duplicates: {duplicates}; clusters of near-identical queries: {len(clusters)}",
        *L.coverage(clusters, chosen),
    ]
    return report + dest.write(cases)


def accept(review: Path, output: Path) -> list[str]:
    """The reviewed CSV as a native test set."""
    cases = accept_review(review)
    write_jsonl(output, cases)
    return [f"accepted {summary(cases)}; wrote {output}"]
