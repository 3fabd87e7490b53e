"""Candidates as files: front matter, id rules, templates, recommended graders, endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.candidates import (
    Candidate,
    CandidateFileError,
    CaseTemplateError,
    EndpointResponseError,
    RecommendedGrader,
    extract_output,
    load_candidates,
    parse_recommended_graders,
    read_candidate_file,
    split_front_matter,
    unknown_variables,
)
from engine.models import ExpectedAnswer, TestCase

PROJECT = Path(__file__).resolve().parents[1] / "data" / "project" / "candidates"

ALLOWED = "{{input}}, {{context}}, {{expected}} and {{metadata.FIELD}}"


def case(**kw: object) -> TestCase:
    base: dict[str, object] = {
        "id": "q1",
        "query": 'What is the "EU AI Act"?',
        "expected_answer": ExpectedAnswer(text="A regulation with four risk tiers."),
        "context": ("Passage one.", "Passage two."),
        "metadata": {"difficulty": "hard", "tags": ["law", "eu"], "nested": {"level": 2}},
    }
    base.update(kw)
    return TestCase.model_validate(base)


def write(folder: Path, relative: str, text: str) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the project


def test_project_candidates_ids_parents_and_order() -> None:
    found = load_candidates(PROJECT)
    assert [(c.id, c.family, c.parent, c.variant_label) for c in found] == [
        ("analyst", "analyst", None, None),
        ("analyst-citations", "analyst", "analyst", "citations"),
        ("rag-a", "rag-a", None, None),
        ("summarizer", "summarizer", None, None),
        ("summarizer-concise", "summarizer", "summarizer", "one-sentence"),
    ]


def test_front_matter_fields_and_body_as_system_prompt() -> None:
    (base, variant) = load_candidates(PROJECT, ["analyst", "analyst-citations"])
    assert base.name == "Full Structured Analyst"
    assert base.runner == "llm_prompt"
    assert base.system_prompt.startswith("You are a technical analyst.")
    assert base.system_prompt.endswith("- Reference source material explicitly")
    assert base.recommended_datasets == ("context-qa",)
    assert base.grader_rationale.startswith("Faithfulness is highest")
    assert base.grader_weights() == {"faithfulness": 0.6, "llm-judge-helpful": 0.4}
    assert (variant.model, variant.temperature) == ("gpt-4o-mini", 0.2)
    assert variant.grader_weights() == {"faithfulness": 0.7, "llm-judge-helpful": 0.3}
    assert variant.notes.startswith("Compare against analyst")


def test_ids_argument_selects_in_the_given_order() -> None:
    chosen = load_candidates(PROJECT, ["summarizer-concise", "analyst"])
    assert [c.id for c in chosen] == ["summarizer-concise", "analyst"]


def test_unknown_id_is_refused() -> None:
    with pytest.raises(CandidateFileError) as caught:
        load_candidates(PROJECT, ["analyst", "analyst-bullets"])
    assert str(caught.value) == (
        f"{PROJECT}: unknown candidate 'analyst-bullets' (known: analyst, analyst-citations, "
        "rag-a, summarizer, summarizer-concise)"
    )


# --------------------------------------------------------------------------- rendering


def test_render_user_and_system() -> None:
    (base, variant, summ) = load_candidates(PROJECT, ["analyst", "analyst-citations", "summarizer"])
    c = case()
    assert base.render_user(c) == 'What is the "EU AI Act"?'
    assert "Context: Passage one.\n\nPassage two.\n" in base.render_system(c)
    assert variant.render_user(c) == 'Question (hard): What is the "EU AI Act"?\n'
    assert summ.render_user(c) == (
        'Summarise:\nWhat is the "EU AI Act"?\n\nReference: A regulation with four risk tiers.'
    )


def test_context_defaults_to_ground_truth_and_metadata_values_render_as_json() -> None:
    c = TestCase.model_validate(
        {
            "id": "q2",
            "query": "Q",
            "ground_truth": [{"chunk_id": "p1#0", "text": "GT passage."}],
            "metadata": {"n": 3, "tags": ["a"], "none": None},
        }
    )
    cand = Candidate(
        id="t",
        family="t",
        name="t",
        user_template=(
            "{{context}}|{{metadata.n}}|{{ metadata.tags }}|{{metadata.none}}|{{expected}}"
        ),
    )
    assert cand.render_user(c) == 'GT passage.|3|["a"]||'


def test_missing_metadata_field_is_a_per_case_error() -> None:
    (variant,) = load_candidates(PROJECT, ["analyst-citations"])
    with pytest.raises(CaseTemplateError) as caught:
        variant.render_user(case(id="q7", metadata={"level": 1}))
    assert str(caught.value) == (
        "case 'q7': candidate 'analyst-citations' user_template uses {{metadata.difficulty}}, "
        "but the case's metadata has no field 'difficulty'"
    )
    nested = Candidate(id="n", family="n", name="n", user_template="{{metadata.nested.deep}}")
    with pytest.raises(CaseTemplateError, match=r"has no field 'nested\.deep'"):
        nested.render_user(case())
    ok = Candidate(id="n", family="n", name="n", user_template="{{metadata.nested.level}}")
    assert ok.render_user(case()) == "2"


def test_unknown_variables() -> None:
    assert unknown_variables("{{input}} {{ context }} {{expected}} {{metadata.a_b.c-d}}") == []
    assert unknown_variables("{{question}} {{metadata}} {{metadata.}} {{Input}} {{question}}") == [
        "question",
        "metadata",
        "metadata.",
        "Input",
    ]


def test_unknown_template_variables_are_refused_at_load(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "qa/base.md",
        "---\nuser_template: 'Q: {{question}} {{input}}'\n---\nUse {{ctx}} and {{context}}.\n",
    )
    with pytest.raises(CandidateFileError) as caught:
        load_candidates(tmp_path)
    assert str(caught.value).splitlines() == [
        f"{path}: field 'body': unknown template variable {{{{ctx}}}} (allowed: {ALLOWED})",
        f"{path}: field 'user_template': unknown template variable {{{{question}}}} "
        f"(allowed: {ALLOWED})",
    ]


# --------------------------------------------------------------------------- front matter


def test_split_front_matter() -> None:
    assert split_front_matter("---\na: 1\n---\nbody\n") == ("a: 1\n", "body\n")
    assert split_front_matter("\ufeff---\r\na: 1\r\n---\r\nbody") == ("a: 1\r\n", "body")
    assert split_front_matter("---\n---\n") == ("", "")
    assert split_front_matter("no front matter") is None
    assert split_front_matter("---\na: 1\n") is None


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (
            "Just a prompt.\n",
            [
                "no front matter: the file must start with a '---' line, YAML fields, and a "
                "closing '---' line"
            ],
        ),
        (
            "---\nname: [x\n---\n",
            [
                "invalid YAML in the front matter at line 3, column 1: expected ',' or ']', but "
                "got '<stream end>'"
            ],
        ),
        ("---\n- a\n---\n", ["the front matter must be a mapping of fields"]),
        (
            "---\nrunner: lambda\ntemprature: 0.2\n---\n",
            [
                "field 'runner': input should be 'llm_prompt' or 'http_endpoint' (got 'lambda')",
                "field 'temprature': is not a known field; did you mean 'temperature'? (known: "
                "name, description, runner, user_template, provider, model, temperature, "
                "max_tokens, recommended_graders, recommended_datasets, grader_rationale, notes, "
                "variant_label, parent, edit, endpoint_url, endpoint_method, endpoint_headers, "
                "endpoint_body_template, endpoint_response_path, endpoint_timeout)",
            ],
        ),
        (
            "---\ntemperature: 3\n---\n",
            ["field 'temperature': input should be less than or equal to 2 (got 3)"],
        ),
        (
            "---\nrecommended_graders: 'faithfulness:high'\n---\n",
            [
                "field 'recommended_graders': grader 'faithfulness' has a weight that is not a "
                "number: 'high'"
            ],
        ),
        (
            "---\nendpoint_url: http://x\n---\n",
            ["field 'endpoint_url': applies to runner http_endpoint only; this is llm_prompt"],
        ),
        (
            "---\nrunner: http_endpoint\n---\n",
            ["field 'endpoint_url': is required for runner http_endpoint"],
        ),
        (
            "---\nrunner: http_endpoint\nendpoint_url: ftp://x\n---\n",
            ["field 'endpoint_url': must start with http:// or https://"],
        ),
        (
            "---\nrunner: http_endpoint\nendpoint_url: http://x\nendpoint_body_template: "
            "'{\"q\": {{input}'\n---\n",
            [
                "field 'endpoint_body_template': is not valid JSON once rendered: Expecting "
                "property name enclosed in double quotes at character 7"
            ],
        ),
        (
            "---\nrunner: http_endpoint\nendpoint_url: http://x\nendpoint_headers: '{bad'\n---\n",
            [
                "field 'endpoint_headers': a JSON string of headers must be valid JSON: Expecting "
                "property name enclosed in double quotes"
            ],
        ),
    ],
)
def test_malformed_candidate_files(tmp_path: Path, text: str, lines: list[str]) -> None:
    path = write(tmp_path, "fam/base.md", text)
    with pytest.raises(CandidateFileError) as caught:
        read_candidate_file(path, "fam")
    assert str(caught.value).splitlines() == [f"{path}: {line}" for line in lines]


def test_empty_front_matter_takes_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "qa/base.md", "---\n---\nAnswer briefly.\n")
    c = read_candidate_file(path, "qa")
    assert (c.id, c.name, c.runner, c.user_template, c.system_prompt) == (
        "qa",
        "qa",
        "llm_prompt",
        "{{input}}",
        "Answer briefly.",
    )
    assert c.recommended_graders == ()


def test_variant_without_base_and_duplicate_ids(tmp_path: Path) -> None:
    orphan = write(tmp_path, "solo/terse.md", "---\n---\n")
    with pytest.raises(CandidateFileError) as caught:
        load_candidates(tmp_path)
    assert str(caught.value) == (
        f"{orphan}: variant 'solo-terse' has no parent: {tmp_path / 'solo' / 'base.md'} is missing"
    )
    other = tmp_path / "other"
    write(other, "a/b.md", "---\n---\n")
    write(other, "a/base.md", "---\n---\n")
    clash = write(other, "a-b/base.md", "---\n---\n")
    with pytest.raises(CandidateFileError) as caught:
        load_candidates(other)
    assert str(caught.value) == f"{clash}: id 'a-b' is already used by {other / 'a' / 'b.md'}"


def test_top_level_file_is_a_standalone_candidate(tmp_path: Path) -> None:
    write(tmp_path, "quick.md", "---\nname: Quick\n---\nBe quick.\n")
    (c,) = load_candidates(tmp_path)
    assert (c.id, c.family, c.parent) == ("quick", "quick", None)


# --------------------------------------------------------------------------- graders


def test_recommended_graders_forms() -> None:
    expected = (
        RecommendedGrader(grader="faithfulness", weight=0.6),
        RecommendedGrader(grader="llm-judge-helpful", weight=0.4),
    )
    assert parse_recommended_graders("faithfulness:0.6, llm-judge-helpful:0.4") == expected
    assert parse_recommended_graders({"faithfulness": 0.6, "llm-judge-helpful": 0.4}) == expected
    assert parse_recommended_graders(["faithfulness:0.6", {"llm-judge-helpful": 0.4}]) == expected
    assert parse_recommended_graders("rag") == (RecommendedGrader(grader="rag", weight=1.0),)
    assert parse_recommended_graders({"rag": None}) == (RecommendedGrader(grader="rag"),)
    assert parse_recommended_graders(None) == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("a:0.5, a:0.5", "grader 'a' is listed twice"),
        ("a:-1", "grader 'a' has weight '-1'; use a number >= 0"),
        ("a:nan", "grader 'a' has weight 'nan'; use a number >= 0"),
        ({"a": True}, "grader 'a' has a weight that is not a number: True"),
        (":0.5", "a grader name is empty"),
        (["a", ["b"]], "cannot read ['b']: use 'name:weight' or {name: weight}"),
        (3, "use 'name:weight, name:weight', a mapping of name to weight, or a list"),
        ("bad name:1", "'bad name' is not a valid id"),
    ],
)
def test_recommended_graders_errors(value: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_recommended_graders(value)
    assert str(caught.value).startswith(message)


def test_summarizer_list_form_from_file() -> None:
    (summ,) = load_candidates(PROJECT, ["summarizer"])
    assert summ.grader_weights() == {
        "llm-judge-helpful": 0.4,
        "semantic-similarity": 0.3,
        "faithfulness": 1.0,
    }
    assert summ.temperature == 0.0


# --------------------------------------------------------------------------- http_endpoint


def test_http_endpoint_candidate() -> None:
    (rag,) = load_candidates(PROJECT, ["rag-a"])
    assert rag.endpoint is not None
    assert rag.endpoint.url == "http://127.0.0.1:8080/query"
    assert rag.endpoint.method == "POST"
    assert rag.endpoint.headers == {"Content-Type": "application/json"}
    assert rag.endpoint.response_path == "data.answer"
    body = rag.render_body(case(query='Say "hi"\nthen stop'))
    assert json.loads(body) == {"query": 'Say "hi"\nthen stop', "top_k": 3, "tags": ["law", "eu"]}
    assert rag.extract_output({"data": {"answer": "Four tiers."}}) == "Four tiers."
    with pytest.raises(EndpointResponseError) as caught:
        rag.extract_output({"data": {"text": "x"}})
    assert (
        str(caught.value) == "the reply has nothing at 'data.answer' (response path 'data.answer')"
    )


def test_http_endpoint_defaults_and_url_template(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "svc/base.md",
        "---\nrunner: http_endpoint\nendpoint_url: 'http://127.0.0.1:9/ask?q={{input}}'\n"
        "endpoint_method: GET\nendpoint_headers: {X-Key: abc}\n---\n",
    )
    c = read_candidate_file(path, "svc")
    assert c.endpoint is not None
    assert c.endpoint.body_template == '{"query": "{{input}}"}'
    assert c.endpoint.headers == {"X-Key": "abc"}
    assert c.render_url(case(query="a b&c")) == "http://127.0.0.1:9/ask?q=a%20b%26c"
    assert json.loads(c.render_body(case(query="x"))) == {"query": "x"}


def test_extract_output_default_fields() -> None:
    assert extract_output({"output": "o", "text": "t"}) == "o"
    assert extract_output({"result": "r", "answer": "a"}) == "r"
    assert extract_output({"answer": "a"}) == "a"
    assert extract_output("plain") == "plain"
    assert extract_output({"choices": [{"text": "c"}]}, "choices.0.text") == "c"
    assert extract_output({"choices": [{"n": 1}]}, "choices.-1.n") == "1"
    with pytest.raises(EndpointResponseError) as caught:
        extract_output({"data": 1, "ok": True})
    assert str(caught.value) == (
        "the reply has none of the fields output, response, text, result, answer (it has "
        "'data', 'ok'); set endpoint_response_path"
    )
    with pytest.raises(EndpointResponseError, match="the reply is a JSON list"):
        extract_output([1, 2])
    with pytest.raises(EndpointResponseError, match=r"nothing at 'choices\.5'"):
        extract_output({"choices": []}, "choices.5.text")


def test_llm_candidate_has_no_body() -> None:
    (base,) = load_candidates(PROJECT, ["analyst"])
    with pytest.raises(ValueError, match="is not an http_endpoint"):
        base.render_body(case())
