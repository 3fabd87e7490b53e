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

from engine.candidates.files import (
    CandidateFileError,
    candidate_files,
    load_candidates,
    read_candidate_file,
    split_front_matter,
)
from engine.candidates.model import (
    RESPONSE_FIELDS,
    Candidate,
    CandidateFrontMatter,
    EndpointResponseError,
    HttpEndpoint,
    RecommendedGrader,
    RunnerKind,
    extract_output,
    parse_recommended_graders,
)
from engine.candidates.templates import (
    TEMPLATE_RE,
    CaseTemplateError,
    render_json_template,
    render_template,
    template_variables,
    unknown_variables,
    variable_value,
)

__all__ = [
    "RESPONSE_FIELDS",
    "TEMPLATE_RE",
    "Candidate",
    "CandidateFileError",
    "CandidateFrontMatter",
    "CaseTemplateError",
    "EndpointResponseError",
    "HttpEndpoint",
    "RecommendedGrader",
    "RunnerKind",
    "candidate_files",
    "extract_output",
    "load_candidates",
    "parse_recommended_graders",
    "read_candidate_file",
    "render_json_template",
    "render_template",
    "split_front_matter",
    "template_variables",
    "unknown_variables",
    "variable_value",
]
