"""Grader files: the project's files load as written; malformed ones are refused with
one readable line per problem (file, field, reason), before any grader is called."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.graders import (
    GraderConfigError,
    GraderFileError,
    LocalJudgeRefusal,
    load_graders,
    read_grader_file,
    resolve_specs,
)
from engine.graders.deterministic import JsonSchemaGrader
from engine.graders.options import (
    ContainsOptions,
    JsonSchemaOptions,
    RegexOptions,
    RubricOptions,
)
from engine.graders.spec import parse_grader

DATA = Path(__file__).resolve().parents[1] / "data"
PROJECT = DATA / "project" / "graders"
BAD = DATA / "bad_graders"

TYPES = (
    "exact-match, contains, regex, json-schema, is-refusal, semantic-similarity, rouge-l, "
    "bleu, chrf, levenshtein, llm-rubric, accuracy, completeness, attribution, faithfulness, "
    "answer-synthesis, claim-faithfulness, rag, factual-correctness, nli, python, g-eval, "
    "factuality, answer-relevance, context-recall, context-relevance"
)

BAD_FILES: dict[str, list[str]] = {
    "bad_regex.yaml": [
        "field 'options.pattern': invalid regular expression: unterminated character set "
        "at position 0"
    ],
    "bad_schema.yaml": [
        "field 'options.schema': invalid JSON Schema at 'required': 'title' is not of type 'array'"
    ],
    "unknown_type.yaml": [f"field 'type': unknown grader type 'regexp' (known: {TYPES})"],
    "missing_pattern.yaml": ["field 'options.pattern': is required"],
    "typo_field.yaml": [
        "field 'treshold': is not a known field; did you mean 'threshold'? (known: type, id, "
        "name, description, options, weight, threshold, judge, judge_temperature)"
    ],
    "negative_weight.yaml": [
        "field 'weight': input should be greater than or equal to 0 (got -0.5)"
    ],
    "threshold_on_rule.yaml": [
        "field 'threshold': exact-match passes or fails by its rule and takes no threshold"
    ],
    "bad_yaml.yaml": ["invalid YAML at line 4, column 7: expected ',' or ']', but got ':'"],
    "not_mapping.yaml": ["a grader file must be a mapping of fields, got a YAML list"],
    "empty_rubric.yaml": ["field 'options.rubric': the rubric is empty"],
    "bad_mode.yaml": [
        "field 'options.mode': input should be 'all' or 'any' (got 'some')",
        "field 'options.case': input should be 'sensitive' or 'insensitive' (got 'upper')",
    ],
    "threshold_range.yaml": ["field 'threshold': input should be less than or equal to 1 (got 80)"],
    "missing_schema_file.yaml": [
        "field 'options.schema_path': cannot read schema file 'schemas/nowhere.json': "
        "No such file or directory"
    ],
    "bad id.yaml": [
        "field 'id': the file stem 'bad id' is not a valid id: use letters, digits, '.', '_' "
        "and '-', starting with a letter or digit; give an 'id'"
    ],
    "unknown_option.yaml": [
        "field 'options.ignore_case': is not a known field (known: flags, pattern, must_match)"
    ],
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_malformed_file_is_refused_with_exact_message(name: str) -> None:
    path = BAD / name
    with pytest.raises(GraderFileError) as caught:
        read_grader_file(path)
    expected = [f"{path}: {line}" for line in BAD_FILES[name]]
    assert str(caught.value).splitlines() == expected
    assert [str(p) for p in caught.value.problems] == expected


def test_every_bad_file_is_covered() -> None:
    assert sorted(p.name for p in BAD.iterdir()) == sorted(BAD_FILES)


def test_folder_reports_every_problem_of_every_file_before_any_call() -> None:
    class ExplodingEmbedder:
        name = "exploding"
        default_threshold = 0.5

        def embed(self, texts: object) -> object:
            raise AssertionError("no embedder call may happen while loading")

    with pytest.raises(GraderFileError) as caught:
        load_graders(BAD, ["accuracy"], embedder=ExplodingEmbedder())  # type: ignore[arg-type]
    lines = str(caught.value).splitlines()
    assert len(lines) == sum(len(v) for v in BAD_FILES.values())
    assert {Path(p.file).name for p in caught.value.problems} == set(BAD_FILES)


def test_config_spelling_and_threshold_inside_it_are_read() -> None:
    spec = read_grader_file(PROJECT / "semantic-similarity.yaml")
    assert (spec.id, spec.type, spec.threshold, spec.name) == (
        "semantic-similarity",
        "semantic-similarity",
        0.8,
        "Semantic Similarity",
    )


def test_llm_judge_alias_and_top_level_rubric() -> None:
    spec = read_grader_file(PROJECT / "llm-judge-helpful.yaml")
    assert spec.type == "llm-rubric"
    assert spec.threshold == 0.7
    assert isinstance(spec.options, RubricOptions)
    assert spec.options.rubric.startswith("Evaluate if the response is helpful")


def test_project_folder_loads_with_ids_from_stems_or_files() -> None:
    specs = resolve_specs(PROJECT)
    assert [s.id for s in specs] == [
        "cites-source",
        "exact-label",
        "faithfulness",
        "answer-json",
        "llm-judge-helpful",
        "mentions-tiers",
        "no-contractions",
        "paper-json",
        "semantic-similarity",
    ]
    by_id = {s.id: s for s in specs}
    assert by_id["mentions-tiers"].weight == 0.5
    assert by_id["exact-label"].threshold is None
    assert isinstance(by_id["mentions-tiers"].options, ContainsOptions)
    regex = by_id["no-contractions"].options
    assert isinstance(regex, RegexOptions) and regex.must_match is False


def test_schema_path_is_resolved_relative_to_the_grader_file() -> None:
    spec = read_grader_file(PROJECT / "paper-json.yaml")
    assert isinstance(spec.options, JsonSchemaOptions)
    assert spec.options.json_schema is not None
    assert spec.options.json_schema["required"] == ["title", "authors"]
    grader = JsonSchemaGrader(spec)
    assert grader.id == "paper-json"


def test_a_file_overrides_a_builtin_of_the_same_name() -> None:
    (spec,) = resolve_specs(PROJECT, ["faithfulness"])
    assert spec.source is not None and spec.threshold == 1.0
    (builtin,) = resolve_specs(None, ["faithfulness"])
    assert builtin.source is None and builtin.threshold == 0.75


def test_unknown_names_are_refused_together() -> None:
    with pytest.raises(GraderConfigError) as caught:
        resolve_specs(PROJECT, ["cites-source", "helpful", "toxicity"])
    assert str(caught.value) == (
        f"unknown graders 'helpful', 'toxicity': no file in {PROJECT} has that id, and they "
        "are not built-in (built-ins: accuracy, completeness, attribution, faithfulness, "
        "answer-synthesis, claim-faithfulness, rag, is-refusal, factual-correctness, nli)"
    )


def test_missing_embedder_and_local_judge_are_refused_at_load() -> None:
    class LocalJudge:
        name = "local"

    with pytest.raises(GraderConfigError) as caught:
        load_graders(PROJECT, ["semantic-similarity", "llm-judge-helpful"], judge=LocalJudge())
    lines = str(caught.value).splitlines()
    source = PROJECT / "semantic-similarity.yaml"
    assert lines[0] == (
        f"grader 'semantic-similarity' ({source}) is semantic-similarity and needs an "
        "embedder; none was configured"
    )
    assert lines[1].startswith(
        f"grader 'llm-judge-helpful' ({PROJECT / 'llm-judge-helpful.yaml'}) is an llm-rubric: "
        "its rubric must be read by a language model, and the local judge is deterministic"
    )
    assert "--judge openai:MODEL" in lines[1]


def test_local_judge_refusal_is_typed() -> None:
    class LocalJudge:
        name = "local"

    with pytest.raises(LocalJudgeRefusal):
        load_graders(PROJECT, ["llm-judge-helpful"], judge=LocalJudge())


def test_judge_without_rubric_method_is_refused() -> None:
    class OldJudge:
        name = "openai:gpt-4o-mini"

    with pytest.raises(GraderConfigError, match="has no grade_rubric method"):
        load_graders(PROJECT, ["llm-judge-helpful"], judge=OldJudge())


def test_missing_folder_leaves_builtins_only() -> None:
    graders = load_graders(DATA / "no-such-folder", ["rag", "accuracy"])
    assert [g.id for g in graders] == ["rag", "accuracy"]
    assert load_graders(None) == []


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("type: accuracy\nid: same\n")
    (tmp_path / "b.yaml").write_text("type: rag\nid: same\n")
    with pytest.raises(GraderFileError) as caught:
        resolve_specs(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'b.yaml'}: field 'id': id 'same' is already used by {tmp_path / 'a.yaml'}"
    )


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        (
            {"type": "contains", "options": {"values": []}},
            "field 'options.values': give at least one value to look for",
        ),
        (
            {"type": "contains", "options": {"values": ["a", ""]}},
            "field 'options.values': an empty string is found in every output; remove it",
        ),
        (
            {"type": "regex", "options": {"pattern": "a", "flags": "q"}},
            "field 'options.flags': "
            "unknown regex flag 'q' (use letters imsxa or IGNORECASE, MULTILINE, DOTALL, VERBOSE, "
            "ASCII)",
        ),
        (
            {"type": "json-schema"},
            "field 'options': give exactly one of 'schema' (inline) or 'schema_path'",
        ),
        (
            {"type": "regex", "config": {"pattern": "x"}, "options": {"pattern": "y"}},
            "field 'config': give either 'options' or 'config', not both",
        ),
        (
            {"type": "rag", "threshold": 0.5, "options": {"threshold": 0.6}},
            "field 'options.threshold': threshold is given twice",
        ),
        (
            {"type": "accuracy", "weight": "heavy"},
            "field 'weight': input should be a valid "
            "number, unable to parse string as a number (got 'heavy')",
        ),
        (
            {"type": "regex", "options": {"pattern": ""}},
            "field 'options.pattern': the pattern is empty and would match every output",
        ),
    ],
)
def test_more_malformations(raw: dict[str, object], line: str) -> None:
    with pytest.raises(GraderFileError) as caught:
        parse_grader(raw, "g.yaml", "g", None)
    assert str(caught.value) == f"g.yaml: {line}"


def test_single_value_string_is_read_as_one_value() -> None:
    spec = parse_grader({"type": "contains", "options": {"values": "Acme"}}, "g.yaml", "g", None)
    assert isinstance(spec.options, ContainsOptions) and spec.options.values == ("Acme",)
