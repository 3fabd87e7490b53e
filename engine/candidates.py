"""Candidates as files: prompt variants in ``candidates/<family>/<name>.md``.

The format is the eval-harness write-up's prompt file: YAML front matter, then the
system prompt as the body::

    ---
    name: Full Structured Analyst
    runner: llm_prompt                 # or http_endpoint
    user_template: '{{input}}'         # {{input}} {{context}} {{expected}} {{metadata.x}}
    model: gpt-4o-mini                 # optional; the run's target model otherwise
    temperature: 0.2                   # optional
    recommended_graders: faithfulness:0.6, llm-judge-helpful:0.4
    ---
    You are a technical analyst. Context: {{context}}

Ids follow the write-up: the folder is the family, ``base.md`` has the family's id and
every other file ``<family>-<stem>``, a variant whose parent is the family's base.
``http_endpoint`` candidates take the write-up's ``endpoint_url``, ``endpoint_method``,
``endpoint_headers`` and ``endpoint_body_template``; the answer is read from
``endpoint_response_path`` when given, else from the first of ``output``, ``response``,
``text``, ``result`` (the write-up's order) and ``answer``.

Every template is checked when the file is loaded: an unknown variable is refused before
the run starts. A ``{{metadata.x}}`` that one case lacks is an error of that case only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engine.errors import InputError
from engine.graders.spec import FileProblem, check_id, known_fields, pydantic_problems
from engine.models import Frozen, TestCase

RunnerKind = Literal["llm_prompt", "http_endpoint"]

TEMPLATE_RE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
"""A template variable: ``{{ name }}`` (spaces inside the braces are allowed)."""

_METADATA_RE = re.compile(r"^metadata(\.[A-Za-z_][A-Za-z0-9_-]*)+$")
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.DOTALL | re.MULTILINE)
_ALLOWED = ("input", "context", "expected")
_ALLOWED_TEXT = "{{input}}, {{context}}, {{expected}} and {{metadata.FIELD}}"
RESPONSE_FIELDS: tuple[str, ...] = ("output", "response", "text", "result", "answer")
"""Fields an endpoint's JSON answer is read from, in order, when no path is configured.
The first four are the write-up's; ``answer`` is what its own RAG example returns."""


class CandidateFileError(InputError):
    """One or more candidate files are malformed; nothing was run. One line per problem."""

    def __init__(self, problems: Sequence[FileProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class CaseTemplateError(Exception):
    """A template cannot be rendered for one case (a metadata field the case lacks)."""


class EndpointResponseError(Exception):
    """An endpoint's answer holds no output where the candidate says it is."""


# --------------------------------------------------------------------------- templates


def template_variables(template: str) -> list[str]:
    """The variables of ``template`` in order of appearance (duplicates kept)."""
    return [m.group(1) for m in TEMPLATE_RE.finditer(template)]


def unknown_variables(template: str) -> list[str]:
    """The variables of ``template`` that are not allowed, each once."""
    bad = [
        v for v in template_variables(template) if v not in _ALLOWED and not _METADATA_RE.match(v)
    ]
    return list(dict.fromkeys(bad))


def _metadata_value(case: TestCase, variable: str, owner: str) -> Any:
    value: Any = case.metadata
    path = variable.split(".")[1:]
    for depth, key in enumerate(path):
        if not isinstance(value, Mapping) or key not in value:
            missing = ".".join(path[: depth + 1])
            raise CaseTemplateError(
                f"case {case.id!r}: {owner} uses {{{{{variable}}}}}, but the case's metadata "
                f"has no field {missing!r}"
            )
        value = value[key]
    return value


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def variable_value(case: TestCase, variable: str, owner: str = "the template") -> Any:
    """The value of one allowed template variable for ``case`` (text, or metadata as is)."""
    if variable == "input":
        return case.query
    if variable == "context":
        return "\n\n".join(case.effective_context)
    if variable == "expected":
        return case.expected_answer.text
    if _METADATA_RE.match(variable):
        return _metadata_value(case, variable, owner)
    raise CaseTemplateError(f"{owner}: unknown template variable {{{{{variable}}}}}")


def render_template(template: str, case: TestCase, owner: str = "the template") -> str:
    """Replace every variable of ``template`` with its text for ``case``.

    Raises CaseTemplateError when the case lacks a metadata field the template uses.
    """
    return TEMPLATE_RE.sub(lambda m: _as_text(variable_value(case, m.group(1), owner)), template)


def render_json_template(template: str, case: TestCase, owner: str = "the template") -> str:
    """Render a JSON body: a variable inside quotes is escaped as string content, a bare
    one becomes a JSON value, so inputs with quotes or newlines keep the body valid."""

    def one(match: re.Match[str]) -> str:
        value = variable_value(case, match.group(1), owner)
        start, end = match.span()
        quoted = template[start - 1 : start] == '"' and template[end : end + 1] == '"'
        text = json.dumps(value if not quoted else _as_text(value), ensure_ascii=False)
        return text[1:-1] if quoted else text

    return TEMPLATE_RE.sub(one, template)


# --------------------------------------------------------------------------- graders


class RecommendedGrader(Frozen):
    """A grader a candidate asks for, with its weight in the candidate's weighted score."""

    grader: str
    """Grader id (a file of ``graders/`` or a built-in name)."""
    weight: float = 1.0
    """Weight, >= 0."""


def _weight(name: str, raw: Any) -> float:
    if raw is None:
        return 1.0
    if isinstance(raw, bool):
        raise ValueError(f"grader {name!r} has a weight that is not a number: {raw!r}")
    try:
        weight = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"grader {name!r} has a weight that is not a number: {raw!r}") from None
    if math.isnan(weight) or math.isinf(weight) or weight < 0:
        raise ValueError(f"grader {name!r} has weight {raw!r}; use a number >= 0")
    return weight


def _pair(item: str) -> tuple[str, Any]:
    name, sep, weight = item.partition(":")
    return name.strip(), (weight.strip() if sep else None)


def parse_recommended_graders(value: Any) -> tuple[RecommendedGrader, ...]:
    """Read ``recommended_graders`` in any of its forms; raises ValueError.

    The write-up's string ``"faithfulness:0.6, llm-judge-helpful:0.4"``, a mapping
    ``{faithfulness: 0.6}``, or a list of ``"name:weight"``, ``"name"`` or one-key
    mappings. A grader without a weight weighs 1.
    """
    pairs: list[tuple[str, Any]] = []
    if value is None:
        return ()
    if isinstance(value, str):
        pairs = [_pair(item) for item in value.split(",") if item.strip()]
    elif isinstance(value, Mapping):
        pairs = [(str(k).strip(), v) for k, v in value.items()]
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                pairs.append(_pair(item))
            elif isinstance(item, Mapping) and len(item) == 1:
                ((k, v),) = item.items()
                pairs.append((str(k).strip(), v))
            else:
                raise ValueError(f"cannot read {item!r}: use 'name:weight' or {{name: weight}}")
    else:
        raise ValueError("use 'name:weight, name:weight', a mapping of name to weight, or a list")
    out: dict[str, RecommendedGrader] = {}
    for name, raw in pairs:
        if not name:
            raise ValueError("a grader name is empty")
        check_id(name)
        if name in out:
            raise ValueError(f"grader {name!r} is listed twice")
        out[name] = RecommendedGrader(grader=name, weight=_weight(name, raw))
    return tuple(out.values())


# --------------------------------------------------------------------------- models


class HttpEndpoint(Frozen):
    """How an ``http_endpoint`` candidate calls its service."""

    url: str
    """Where to send the request; may hold template variables (URL-encoded when rendered)."""
    method: Literal["GET", "POST"] = "POST"
    """HTTP method; GET sends no body."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra request headers."""
    body_template: str = '{"query": "{{input}}"}'
    """JSON body with template variables (the write-up's default shape)."""
    response_path: str | None = None
    """Dotted path of the answer in the JSON reply (``data.answer``, ``choices.0.text``)."""
    timeout_s: float = 60.0
    """Seconds to wait for the reply."""


class CandidateFrontMatter(BaseModel):
    """The front matter of a candidate file, as written."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str | None = None
    """Human name; the id when absent."""
    description: str = ""
    """What the candidate is for."""
    runner: RunnerKind = "llm_prompt"
    """``llm_prompt`` (call the target model) or ``http_endpoint`` (call a service)."""
    user_template: str = "{{input}}"
    """The user message; the body of the file is the system prompt."""
    provider: str | None = None
    """Provider override (``openai``, ``anthropic``, ``ollama``)."""
    model: str | None = None
    """Model override."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Temperature override."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Output token limit."""
    recommended_graders: tuple[RecommendedGrader, ...] = ()
    """Graders and weights (``faithfulness:0.6, llm-judge-helpful:0.4``)."""
    recommended_datasets: tuple[str, ...] = ()
    """Test sets the candidate is designed for (for people)."""
    grader_rationale: str = ""
    """Why these weights (for people)."""
    notes: str = ""
    """Experiment notes (for people)."""
    variant_label: str | None = None
    """Short label of a variant; the file stem when absent."""
    endpoint_url: str | None = None
    """http_endpoint: the URL."""
    endpoint_method: Literal["GET", "POST"] = "POST"
    """http_endpoint: GET or POST."""
    endpoint_headers: dict[str, str] | None = None
    """http_endpoint: headers, as a mapping or the write-up's JSON string."""
    endpoint_body_template: str | None = None
    """http_endpoint: JSON body with template variables."""
    endpoint_response_path: str | None = None
    """http_endpoint: dotted path of the answer in the JSON reply."""
    endpoint_timeout: float = Field(default=60.0, gt=0.0)
    """http_endpoint: seconds to wait."""

    @field_validator("recommended_graders", mode="before")
    @classmethod
    def _graders(cls, value: Any) -> tuple[RecommendedGrader, ...]:
        return parse_recommended_graders(value)

    @field_validator("recommended_datasets", mode="before")
    @classmethod
    def _datasets(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return value

    @field_validator("endpoint_headers", mode="before")
    @classmethod
    def _headers(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as err:
                raise ValueError(f"a JSON string of headers must be valid JSON: {err.msg}") from err
        if isinstance(value, Mapping):
            return {str(k): str(v) for k, v in value.items()}
        return value


class Candidate(Frozen):
    """A prompt variant (or an endpoint) evaluated on a test set."""

    id: str
    """``family`` for base.md, ``family-stem`` for a variant."""
    family: str
    """The folder the file is in."""
    parent: str | None = None
    """The family's base id for a variant; None for the base itself."""
    variant_label: str | None = None
    """Short label of a variant (the file stem unless the file gives one)."""
    name: str
    """Human name."""
    description: str = ""
    """What the candidate is for."""
    runner: RunnerKind = "llm_prompt"
    """``llm_prompt`` or ``http_endpoint``."""
    system_prompt: str = ""
    """The body of the file (may hold template variables)."""
    user_template: str = "{{input}}"
    """The user message template."""
    provider: str | None = None
    """Provider override."""
    model: str | None = None
    """Model override."""
    temperature: float | None = None
    """Temperature override."""
    max_tokens: int | None = None
    """Output token limit."""
    recommended_graders: tuple[RecommendedGrader, ...] = ()
    """Graders and their weights."""
    recommended_datasets: tuple[str, ...] = ()
    """Test sets the candidate is designed for."""
    grader_rationale: str = ""
    """Why these weights."""
    notes: str = ""
    """Experiment notes."""
    endpoint: HttpEndpoint | None = None
    """How to call the service (http_endpoint only)."""
    source: str = ""
    """The file it came from."""

    def render_user(self, case: TestCase) -> str:
        """The user message for ``case``. Raises CaseTemplateError (missing metadata)."""
        return render_template(self.user_template, case, f"candidate {self.id!r} user_template")

    def render_system(self, case: TestCase) -> str:
        """The system prompt for ``case``. Raises CaseTemplateError (missing metadata)."""
        return render_template(self.system_prompt, case, f"candidate {self.id!r} system prompt")

    def render_body(self, case: TestCase) -> str:
        """The JSON request body of an http_endpoint candidate for ``case``."""
        if self.endpoint is None:
            raise ValueError(f"candidate {self.id!r} is not an http_endpoint")
        return render_json_template(
            self.endpoint.body_template, case, f"candidate {self.id!r} endpoint_body_template"
        )

    def render_url(self, case: TestCase) -> str:
        """The request URL of an http_endpoint candidate, variables URL-encoded."""
        if self.endpoint is None:
            raise ValueError(f"candidate {self.id!r} is not an http_endpoint")
        owner = f"candidate {self.id!r} endpoint_url"
        return TEMPLATE_RE.sub(
            lambda m: quote(_as_text(variable_value(case, m.group(1), owner)), safe=""),
            self.endpoint.url,
        )

    def extract_output(self, payload: Any) -> str:
        """The answer in an endpoint's reply (decoded JSON, or text). Raises
        EndpointResponseError."""
        path = self.endpoint.response_path if self.endpoint is not None else None
        return extract_output(payload, path)

    def grader_weights(self) -> dict[str, float]:
        """Recommended grader id -> weight (empty when the file recommends none)."""
        return {g.grader: g.weight for g in self.recommended_graders}


def extract_output(payload: Any, path: str | None = None) -> str:
    """The answer in an endpoint reply: at ``path`` (dotted, list indices as numbers) or
    the first text field of ``RESPONSE_FIELDS``. Raises EndpointResponseError."""
    if path:
        value = payload
        walked: list[str] = []
        for key in path.split("."):
            walked.append(key)
            if isinstance(value, Mapping) and key in value:
                value = value[key]
            elif (
                isinstance(value, list)
                and key.lstrip("-").isdigit()
                and -len(value) <= int(key) < len(value)
            ):
                value = value[int(key)]
            else:
                raise EndpointResponseError(
                    f"the reply has nothing at {'.'.join(walked)!r} (response path {path!r})"
                )
        return _as_text(value)
    if isinstance(payload, str):
        return payload
    if isinstance(payload, Mapping):
        for key in RESPONSE_FIELDS:
            if isinstance(payload.get(key), str):
                return str(payload[key])
        keys = ", ".join(repr(k) for k in list(payload)[:10])
        raise EndpointResponseError(
            f"the reply has none of the fields {', '.join(RESPONSE_FIELDS)} (it has {keys}); "
            "set endpoint_response_path"
        )
    raise EndpointResponseError(
        f"the reply is a JSON {type(payload).__name__}; set endpoint_response_path"
    )


# --------------------------------------------------------------------------- loading


def split_front_matter(text: str) -> tuple[str, str] | None:
    """(front matter YAML, body) of a Markdown file; None when it has no front matter."""
    match = _FRONT_MATTER_RE.match(text.lstrip("\ufeff"))
    if match is None:
        return None
    return match.group(1), text.lstrip("\ufeff")[match.end() :]


def _template_problems(fm: CandidateFrontMatter, body: str, file: str) -> list[FileProblem]:
    templates: list[tuple[str, str]] = [("body", body)]
    if fm.runner == "llm_prompt":
        templates.append(("user_template", fm.user_template))
    else:
        templates += [
            ("endpoint_url", fm.endpoint_url or ""),
            ("endpoint_body_template", fm.endpoint_body_template or ""),
        ]
    problems = []
    for field, template in templates:
        for variable in unknown_variables(template):
            problems.append(
                FileProblem(
                    file,
                    field,
                    f"unknown template variable {{{{{variable}}}}} (allowed: {_ALLOWED_TEXT})",
                )
            )
    return problems


def _endpoint(fm: CandidateFrontMatter, file: str) -> tuple[HttpEndpoint | None, list[FileProblem]]:
    given = [
        f
        for f in (
            "endpoint_url",
            "endpoint_headers",
            "endpoint_body_template",
            "endpoint_response_path",
        )
        if getattr(fm, f) is not None
    ]
    if fm.runner == "llm_prompt":
        return None, [
            FileProblem(file, f, "applies to runner http_endpoint only; this is llm_prompt")
            for f in given
        ]
    if not fm.endpoint_url:
        return None, [FileProblem(file, "endpoint_url", "is required for runner http_endpoint")]
    if not fm.endpoint_url.startswith(("http://", "https://")):
        return None, [FileProblem(file, "endpoint_url", "must start with http:// or https://")]
    body = fm.endpoint_body_template if fm.endpoint_body_template is not None else None
    endpoint = HttpEndpoint(
        url=fm.endpoint_url,
        method=fm.endpoint_method,
        headers=fm.endpoint_headers or {},
        response_path=fm.endpoint_response_path,
        timeout_s=fm.endpoint_timeout,
        **({"body_template": body} if body is not None else {}),
    )
    if endpoint.method == "POST" and not unknown_variables(endpoint.body_template):
        try:
            json.loads(render_json_template(endpoint.body_template, _probe_case(endpoint)))
        except json.JSONDecodeError as err:
            return None, [
                FileProblem(
                    file,
                    "endpoint_body_template",
                    f"is not valid JSON once rendered: {err.msg} at character {err.pos}",
                )
            ]
    return endpoint, []


def _probe_case(endpoint: HttpEndpoint) -> TestCase:
    # A case holding every metadata field the body uses, with awkward text: only the
    # JSON shape of the rendered body is being checked.
    metadata: dict[str, Any] = {}
    for variable in template_variables(endpoint.body_template):
        if variable.startswith("metadata."):
            *parents, leaf = variable.split(".")[1:]
            node = metadata
            for key in parents:
                if not isinstance(node.get(key), dict):
                    node[key] = {}
                node = node[key]
            node[leaf] = 'x "y"'
    return TestCase(id="probe", query='a "quoted"\nquery', metadata=metadata)


def read_candidate_file(path: Path, family: str | None) -> Candidate:
    """Read one candidate file; ``family`` is its folder (None for a file at the top).

    Raises CandidateFileError naming the file, the field and the reason of every problem.
    """
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CandidateFileError([FileProblem(file, "", f"cannot read the file: {err}")]) from err
    parts = split_front_matter(text)
    if parts is None:
        raise CandidateFileError(
            [
                FileProblem(
                    file,
                    "",
                    "no front matter: the file must start with a '---' line, "
                    "YAML fields, and a closing '---' line",
                )
            ]
        )
    head, body = parts
    try:
        raw = yaml.safe_load(head)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        # +2: the front matter starts on the line after the opening '---'
        where = f" at line {mark.line + 2}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        raise CandidateFileError(
            [FileProblem(file, "", f"invalid YAML in the front matter{where}: {problem}")]
        ) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise CandidateFileError(
            [FileProblem(file, "", "the front matter must be a mapping of fields")]
        )
    try:
        fm = CandidateFrontMatter.model_validate(raw)
    except ValidationError as err:
        raise CandidateFileError(
            pydantic_problems(err, file, "", known_fields(CandidateFrontMatter))
        ) from None
    system_prompt = body.strip()
    problems = _template_problems(fm, system_prompt, file)
    endpoint, endpoint_problems = _endpoint(fm, file)
    problems += endpoint_problems
    stem = path.stem
    if family is None:
        cid, parent, label = stem, None, fm.variant_label
    elif stem == "base":
        cid, parent, label = family, None, fm.variant_label
    else:
        cid, parent, label = f"{family}-{stem}", family, fm.variant_label or stem
    try:
        check_id(cid)
    except ValueError as err:
        problems.append(FileProblem(file, "", f"the candidate id {err}; rename the file or folder"))
    if problems:
        raise CandidateFileError(problems)
    return Candidate(
        id=cid,
        family=family or stem,
        parent=parent,
        variant_label=label,
        name=fm.name or cid,
        description=fm.description,
        runner=fm.runner,
        system_prompt=system_prompt,
        user_template=fm.user_template,
        provider=fm.provider,
        model=fm.model,
        temperature=fm.temperature,
        max_tokens=fm.max_tokens,
        recommended_graders=fm.recommended_graders,
        recommended_datasets=fm.recommended_datasets,
        grader_rationale=fm.grader_rationale,
        notes=fm.notes,
        endpoint=endpoint,
        source=file,
    )


def candidate_files(folder: Path) -> list[tuple[Path, str | None]]:
    """(file, family) of every candidate file: ``<family>/<name>.md`` and top-level ``*.md``."""
    if not folder.is_dir():
        return []
    out: list[tuple[Path, str | None]] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix == ".md":
            out.append((entry, None))
        elif entry.is_dir():
            out += [(p, entry.name) for p in sorted(entry.glob("*.md")) if p.is_file()]
    return out


def load_candidates(folder: Path, ids: list[str] | None = None) -> list[Candidate]:
    """Load and validate every candidate of ``folder`` (a project's ``candidates/``);
    return those of ``ids`` in that order, or all sorted by id.

    Raises CandidateFileError naming every malformed file, a variant whose family has no
    ``base.md``, duplicate ids and unknown requested ids.
    """
    problems: list[FileProblem] = []
    found: dict[str, Candidate] = {}
    for path, family in candidate_files(folder):
        try:
            candidate = read_candidate_file(path, family)
        except CandidateFileError as err:
            problems += err.problems
            continue
        if candidate.id in found:
            problems.append(
                FileProblem(
                    str(path),
                    "",
                    f"id {candidate.id!r} is already used by {found[candidate.id].source}",
                )
            )
            continue
        found[candidate.id] = candidate
    for candidate in found.values():
        if candidate.parent is not None and candidate.parent not in found:
            base = folder / candidate.family / "base.md"
            if not any(p.file == str(base) for p in problems):
                problems.append(
                    FileProblem(
                        candidate.source,
                        "",
                        f"variant {candidate.id!r} has no parent: {base} is missing",
                    )
                )
    if ids is not None:
        unknown = [i for i in ids if i not in found]
        if unknown and not problems:
            listed = ", ".join(repr(u) for u in unknown)
            known = ", ".join(sorted(found)) or "none"
            problems.append(
                FileProblem(str(folder), "", f"unknown candidate {listed} (known: {known})")
            )
    if problems:
        raise CandidateFileError(problems)
    if ids is None:
        return [found[k] for k in sorted(found)]
    return [found[i] for i in dict.fromkeys(ids)]
