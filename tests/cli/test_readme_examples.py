"""Every command the README shows is run as written, and every ``evalhouse`` line of the
README and the docs it links to names a command that exists with flags that command takes.

The README's examples run in a temporary folder with a fresh ``EVALHOUSE_HOME``, through
``bash`` as a reader would paste them: ``.venv/bin/evalhouse`` and ``evalhouse`` on the
``PATH`` are this checkout's command, the test-set files they name hold the README's own
minimal case, and the blocks run in the README's order (the ``sql`` example reads the run
the tour made). Synopsis lines (with ``[OPTIONAL]`` parts or ``PLACEHOLDERS``) cannot run
as written; their commands and flags are checked against ``evalhouse CMD --help``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from engine.models import OptionError, RunConfig, nest_options
from evalhouse.cli import main
from evalhouse.run_options import option

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

SKIPPED = {
    "make demo": "builds .venv and serves the dashboard until stopped",
    "make test": "the full suite, which this suite is part of",
}
"""README commands not run here, and why (the only ones)."""

_FENCE = re.compile(r"^```([A-Za-z]*)\n(.*?)^```", re.S | re.M)
_SHELL = ("", "bash", "sh", "shell", "console")
_INVOKE = re.compile(
    r"(?:^|\$\(|\|\s*|&&\s*|;\s*)\s*(?:[\w.-]*/)*evalhouse\s+(?P<rest>.*?)"
    r"(?=\s\|\s*(?:[\w.-]*/)*evalhouse\s|$)"
)
"""An ``evalhouse`` invocation: at the start of a command (line, ``$(``, a pipe, ``&&``,
``;``), possibly by path (``.venv/bin/evalhouse``); the rest up to the next invocation."""
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
_PLACEHOLDER = re.compile(r"\[|\.\.\.|\w\|\w|(?<![$\w])[A-Z][A-Z_]{2,}\b(?![=a-z])")
"""A synopsis: ``[optional]`` parts, ``...``, alternatives (``a|b``) or placeholders such
as ``RUN_ID``, ``PATH`` (outside quotes; ``$GIT_SHA`` is the shell's)."""
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_WITH_SUBCOMMANDS = ("testset", "traces", "candidates")


@dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown file."""

    file: str
    lang: str
    text: str

    @property
    def lines(self) -> list[str]:
        """Its shell lines, comments dropped, continuations (``\\`` or an indented
        ``[...]`` under a synopsis) joined."""
        out: list[str] = []
        for raw in self.text.splitlines():
            line = "" if raw.lstrip().startswith("#") else re.split(r"\s#\s", raw)[0].rstrip()
            if out and out[-1].endswith("\\"):
                out[-1] = out[-1][:-1].rstrip() + " " + line.strip()
            elif out and raw.startswith(" ") and line.strip().startswith(("[", "--")):
                out[-1] += " " + line.strip()
            elif line.strip():
                out.append(line)
        return out


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path``."""
    text = path.read_text(encoding="utf-8")
    return [Block(path.name, lang, body) for lang, body in _FENCE.findall(text)]


def linked_docs() -> list[Path]:
    """The docs pages the README links to."""
    found = re.findall(r"\]\((docs/[\w-]+\.md)\)", README.read_text(encoding="utf-8"))
    return [ROOT / p for p in dict.fromkeys(found)]


def invocations(line: str) -> Iterator[str]:
    """What follows ``evalhouse`` in each invocation of ``line``."""
    for match in _INVOKE.finditer(line):
        yield match.group("rest").strip()


def is_synopsis(line: str) -> bool:
    """Whether ``line`` shows a command's form rather than a command to run."""
    return any(_PLACEHOLDER.search(_QUOTED.sub("", rest)) for rest in invocations(line))


# ---------------------------------------------------------------------- commands and flags

_HELP: dict[tuple[str, ...], tuple[int, str]] = {}


def help_text(words: tuple[str, ...]) -> tuple[int, str]:
    """Exit code and output of ``evalhouse WORDS --help`` (in this process, cached)."""
    if words not in _HELP:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main([*words, "--help"])
        _HELP[words] = (code, out.getvalue())
    return _HELP[words]


def problems_of(rest: str) -> list[str]:
    """What is wrong with one invocation: an unknown command, or flags it does not take."""
    tokens = rest.split()
    if not tokens or tokens[0].startswith("-"):
        return []
    commands = [(c,) for c in tokens[0].split("|")]
    if tokens[0] in _WITH_SUBCOMMANDS and len(tokens) > 1 and not tokens[1].startswith("-"):
        commands = [(tokens[0], sub) for sub in tokens[1].split("|")]
    flags = _FLAG.findall(rest) if len(commands) == 1 else []  # alternatives share no flags
    out = []
    for words in commands:
        code, text = help_text(words)
        if code != 0:
            out.append(f"'evalhouse {' '.join(words)}' is not a command")
            continue
        missing = [f for f in flags if not re.search(rf"(?<![\w-]){f}(?![\w-])", text)]
        if missing:
            out.append(f"'evalhouse {' '.join(words)}' takes no {', '.join(missing)}")
    return out


@pytest.mark.parametrize("page", [README, *linked_docs()], ids=lambda p: p.name)
def test_every_documented_command_and_flag_exists(page: Path) -> None:
    found = []
    for block in blocks(page):
        if block.lang not in _SHELL:
            continue
        for line in block.lines:
            for rest in invocations(line):
                found += [f"{page.name}: {line.strip()[:100]}: {p}" for p in problems_of(rest)]
    assert not found, "\n".join(found)


def test_the_checker_catches_a_wrong_command_or_flag() -> None:
    assert problems_of("run --test-set x --nmae y") == ["'evalhouse run' takes no --nmae"]
    assert problems_of("rnu --test-set x") == ["'evalhouse rnu' is not a command"]
    assert problems_of("testset from-pages|from-lgos") == [
        "'evalhouse testset from-lgos' is not a command"
    ]
    assert list(invocations("sudo -u postgres createdb --owner evalhouse evalhouse")) == []
    assert list(invocations('RUN=$(evalhouse run --name "x" | tail -n 1)')) == [
        'run --name "x" | tail -n 1)'
    ]


_OPTION = re.compile(r"--option[ =]((?:'[^']*'|\"[^\"]*\"|[^\s`\]'\"])+)")
"""``--option`` and its value as one shell word (quoted parts included)."""


def documented_options() -> list[tuple[str, str]]:
    """Every ``--option KEY=VALUE`` of the README and its docs with a real key, in fenced
    blocks or inline code: (page, the value as a shell passes it)."""
    out = []
    for page in [README, *linked_docs()]:
        for raw in _OPTION.findall(page.read_text(encoding="utf-8")):
            (value,) = shlex.split(raw)
            if not value.split("=", 1)[0].isupper():  # KEY=VALUE, NAME=VALUE: a form
                out.append((page.name, value))
    return out


def test_every_documented_option_parses() -> None:
    options = documented_options()
    assert ("judges-and-verifiers.md", 'http_body={"question": "{{query}}"}') in options
    refused = []
    for page, value in options:
        key, given = option(value)
        try:
            RunConfig.model_validate({"name": "x", "test_set": "t", **nest_options({key: given})})
        except (ValidationError, OptionError) as exc:
            refused.append(f"{page}: --option {value}: {exc}")
    assert not refused, "\n".join(refused)


# ---------------------------------------------------------------------- the README, run


def _readme_case() -> str:
    """The README's minimal native case (a ``json`` block, wrapped there) as one line."""
    (case,) = [b.text for b in blocks(README) if b.lang == "json"]
    return json.dumps(json.loads(case)) + "\n"


def _runnable(block: Block) -> list[str]:
    """The lines of a README block to run as written; [] for a synopsis or data."""
    if block.lang not in _SHELL or "─►" in block.text:
        return []
    lines = [line for line in block.lines if not line.startswith(tuple(SKIPPED))]
    # A block that shows forms is checked by its flags; one that runs holds no form.
    return [] if any(is_synopsis(line) for line in lines) else lines


def _sandbox(tmp_path: Path) -> dict[str, str]:
    """A folder where ``.venv/bin/evalhouse`` and ``evalhouse`` are this checkout's, and
    the environment to run the README's commands in."""
    launcher = (
        f'#!/bin/sh\nexec "{sys.executable}" -c '
        "\"import sys; from evalhouse.cli import console_main; sys.argv[0] = 'evalhouse'; "
        'console_main()" "$@"\n'
    )
    for folder in (tmp_path / ".venv" / "bin", tmp_path / "bin"):
        folder.mkdir(parents=True)
        (folder / "evalhouse").write_text(launcher, encoding="utf-8")
        (folder / "evalhouse").chmod(0o755)
    for name in ("my-cases.jsonl", "evals/cases.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(_readme_case(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALHOUSE_", "OPENAI_"))}
    env.update(
        PATH=f"{tmp_path / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        EVALHOUSE_HOME=str(tmp_path / "home"),
        GIT_SHA="0123abc",
    )
    return env


@pytest.mark.slow
def test_every_readme_example_runs_as_written(tmp_path: Path) -> None:
    readme = blocks(README)
    skipped = [ln for b in readme for ln in b.lines if ln.startswith(tuple(SKIPPED))]
    assert len(skipped) == len(SKIPPED), skipped  # the skip list names README lines only
    env = _sandbox(tmp_path)
    ran: list[tuple[str, subprocess.CompletedProcess[str]]] = []
    for block in readme:
        lines = _runnable(block)
        if not lines:
            continue
        script = "set -eo pipefail\n" + "\n".join(lines) + "\n"
        done = subprocess.run(
            ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        # `check` exits 1 when a threshold fails, as the README says; anything else is 0
        allowed = {0, 1} if lines[-1].lstrip().startswith("evalhouse check") else {0}
        assert done.returncode in allowed, f"{script}\n{done.stderr}"
        assert "Traceback" not in done.stderr and "error:" not in done.stderr, done.stderr
        ran.append((script, done))
    scripts = "".join(script for script, _ in ran)
    assert [s.count("evalhouse ") for s, _ in ran] == [3, 1, 2], scripts

    tour, ask, gate = (done for _, done in ran)
    assert "native" in tour.stderr  # inspect and the runs name the format they read
    assert "estimate:" in tour.stdout
    first_try = tour.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", first_try), tour.stdout
    assert "first-try" in ask.stdout  # the tour's run is in the warehouse already
    # --format junit: a report file with one test case per threshold, named on stderr
    (report,) = tmp_path.glob("evalhouse-check-*.xml")
    assert report.name in gate.stderr
    junit = report.read_text(encoding="utf-8")
    cases = re.findall(r'<testcase[^>]*name="([^"]+)"', junit)
    assert len(cases) == 2 and "accuracy" in cases[0] and "completeness" in cases[1], junit
    assert ("<failure" in junit) == (gate.returncode == 1), junit
