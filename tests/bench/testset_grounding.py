"""How well the verifier check of generated cases tells supported answers from others.

Pages are the demo test set's ground-truth passages (one Markdown file per page URL). Every
draft the offline planner makes (out-of-scope ones aside) is checked three ways:

1. with its own answer (the page's sentences): every one should be kept;
2. with the fact of a draft of another page: every one should be dropped;
3. with the fact of another page of the same company (what a model mixing up two
   products writes): every one should be dropped.

Run: ``.venv/bin/python -m tests.bench.testset_grounding [--count N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import tempfile
from pathlib import Path

from engine.demo import build_weekly_test_sets
from engine.testsets.build import generate as G
from engine.testsets.build.grounding import check_drafts
from engine.testsets.build.pages import read_pages
from engine.verifier import default_verifier


def demo_pages(folder: Path) -> Path:
    """The demo set's passages as Markdown pages, one per page URL."""
    _name, weekly, _date = build_weekly_test_sets(folder / "sets", weeks=1)[0]
    pages: dict[str, dict[str, str]] = {}
    for line in weekly.read_text(encoding="utf-8").splitlines():
        for chunk in json.loads(line)["ground_truth"]:
            pages.setdefault(chunk["page_url"], {})[chunk["chunk_id"]] = chunk["text"]
    out = folder / "pages"
    out.mkdir()
    for i, (url, chunks) in enumerate(sorted(pages.items())):
        title = url.rstrip("/").rsplit("/", 1)[-1].title()
        text = "\n\n".join(chunks.values())
        (out / f"page-{i:02d}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
    return out


def main() -> None:
    """Print the three ratios."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pages = read_pages([demo_pages(Path(tmp))])
    drafts, _, _ = G.plan_drafts(pages, count=args.count, seed=1)
    checked = [d for d in drafts if d.style != "out-of-scope"]
    verifier = default_verifier()
    rng = random.Random(0)

    def company(draft: G.Draft) -> str:
        return draft.chunks[0].text.split()[0]

    def swapped(same_company: bool) -> list[G.Draft]:
        out = []
        for d in checked:
            stated = " ".join(c.text for c in d.chunks)
            others = [
                o.claims[0][0]
                for o in checked
                if o.style == "simple"
                and o.claims[0][0] not in stated
                and (company(o) == company(d)) == same_company
            ]
            if others:
                out.append(dataclasses.replace(d, answer=rng.choice(others)))
        return out

    kept, _ = check_drafts(verifier, checked)
    print(f"own answers kept: {len(kept)}/{len(checked)}")
    for label, same in (("another company's fact", False), ("same company, other page", True)):
        cases = swapped(same)
        _, dropped = check_drafts(verifier, cases)
        print(f"{label} dropped: {len(dropped)}/{len(cases)}")


if __name__ == "__main__":
    main()
