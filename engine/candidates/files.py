"""Reading candidate files and folders; every problem found before any run."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from engine.candidates.model import Candidate, CandidateFrontMatter, HttpEndpoint
from engine.candidates.templates import (
    ALLOWED_TEXT,
    render_json_template,
    template_variables,
    unknown_variables,
)
from engine.errors import InputError
from engine.files import MAX_SPEC_BYTES, UserFileError, read_user_bytes
from engine.graders.spec import FileProblem, check_id, known_fields, pydantic_problems
from engine.models import TestCase

_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.DOTALL | re.MULTILINE)


class CandidateFileError(InputError):
    """One or more candidate files are malformed; nothing was run. One line per problem."""

    def __init__(self, problems: Sequence[FileProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


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
                    f"unknown template variable {{{{{variable}}}}} (allowed: {ALLOWED_TEXT})",
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


def _front_matter(path: Path) -> tuple[CandidateFrontMatter, str]:
    """The validated front matter and the body of a candidate file."""
    file = str(path)
    try:
        text = read_user_bytes(path, "candidate file", MAX_SPEC_BYTES).decode("utf-8")
    except (UserFileError, UnicodeDecodeError) as err:
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
    except (yaml.YAMLError, RecursionError) as err:
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
        return CandidateFrontMatter.model_validate(raw), body
    except ValidationError as err:
        raise CandidateFileError(
            pydantic_problems(err, file, "", known_fields(CandidateFrontMatter))
        ) from None


def canonical_edit(edit: Mapping[str, Any] | None) -> str:
    """An edit as canonical JSON (sorted keys, no spaces): the form ids are derived from
    and the warehouse stores; empty for none."""
    if not edit:
        return ""
    return json.dumps(edit, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def read_candidate_file(path: Path, family: str | None) -> Candidate:
    """Read one candidate file; ``family`` is its folder (None for a file at the top).

    Raises CandidateFileError naming the file, the field and the reason of every problem.
    """
    file = str(path)
    fm, body = _front_matter(path)
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
    if fm.parent is not None:
        parent = fm.parent
        if parent == cid:
            problems.append(FileProblem(file, "parent", "a candidate cannot be its own parent"))
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
        edit=canonical_edit(fm.edit),
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
            if candidate.edit or candidate.parent != candidate.family:
                problems.append(
                    FileProblem(
                        candidate.source,
                        "parent",
                        f"candidate {candidate.parent!r} is not in {folder}",
                    )
                )
                continue
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
