"""Run options have one home: every ``evalhouse run`` flag that sets an option maps to a
``RunConfig`` field, its help shows the field's bounds and default (taken from the model,
once), and every field can be set from the command line."""

from __future__ import annotations

import argparse

import pytest

from engine.models import RunConfig, nest_options, option_bounds
from evalhouse.argtypes import Parser
from evalhouse.cli import build_parser
from evalhouse.run_options import FLAG_OF_FIELD, RUN_FLAGS

NOT_OPTIONS = {
    "--help", "--home", "--catalog", "--catalog-data", "--config", "--option", "--map",
    "--resume", "--estimate", "--no-ingest", "--strict", "--only",
}  # fmt: skip
"""Flags of ``run`` that choose what to do with a config rather than set one of its fields."""


def _run_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices["run"]
    assert isinstance(parser, Parser)
    return parser.complete()  # run adds its flags when first used


def _actions() -> dict[str, argparse.Action]:
    return {s: a for a in _run_parser()._actions for s in a.option_strings if s.startswith("--")}


def test_every_run_flag_maps_to_a_field() -> None:
    fields = set(RunConfig.model_fields)
    assert {row.field for row in RUN_FLAGS} <= fields
    assert set(FLAG_OF_FIELD) <= fields
    unmapped = set(_actions()) - NOT_OPTIONS - set(FLAG_OF_FIELD.values())
    assert unmapped == set(), "a run flag that sets an option must be a row of RUN_FLAGS"


@pytest.mark.parametrize("row", RUN_FLAGS, ids=lambda r: r.flag)
def test_a_flag_s_default_and_bounds_come_from_the_model_once(row: object) -> None:
    from evalhouse.run_options import RunFlag

    assert isinstance(row, RunFlag)
    action = _actions()[row.flag]
    # argparse holds no default of its own: the config file, then the model, decide
    assert action.default is None
    info = RunConfig.model_fields[row.field]
    text = " ".join((action.help or "").split()).replace("%%", "%")
    assert text.count("default") <= 1
    if not info.is_required() and info.default not in (None, False):
        assert text.count(f"default {info.default}") == 1, text
    low, high = option_bounds(row.field)
    if low is not None and high is not None:
        assert f"{low:g}..{high:g}" in text, text


def test_every_field_can_be_set_from_the_command_line() -> None:
    for name in RunConfig.model_fields:
        if name in FLAG_OF_FIELD:
            continue
        assert nest_options({name: None}) == {name: None}  # --option NAME=VALUE takes it


def test_a_value_out_of_the_model_s_bounds_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from evalhouse.cli import main

    monkeypatch.setenv("EVALHOUSE_HOME", str(tmp_path))  # restored after the test

    high = option_bounds("concurrency")[1]
    assert high is not None
    code = main(["run", "--test-set", "x.jsonl", "--name", "n", "--concurrency", f"{high + 1:g}"])
    assert code == 2
    assert "--concurrency" in capsys.readouterr().err
