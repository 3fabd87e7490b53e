"""Write the test sets under this folder with each peer's own writer code.

Not run by the tests (they only read what it wrote): it documents how every file was made.
Each peer runs in a throwaway virtualenv of its own, with the versions pinned here:

    python3.11 -m venv /tmp/venv-ragas01
    /tmp/venv-ragas01/bin/pip install "ragas==0.1.22" "datasets==2.21.0" "pandas==2.2.3" \
        "numpy==1.26.4" "pyarrow==17.0.0" "langchain==0.2.16" "langchain-core==0.2.41" \
        "langchain-community==0.2.17" "langchain-openai==0.1.25" "openai==1.51.0"
    /tmp/venv-ragas01/bin/python generate.py ragas01

    python3.11 -m venv /tmp/venv-ragas04
    /tmp/venv-ragas04/bin/pip install "ragas==0.4.3" "datasets==5.2.0" "pandas==3.1.1" \
        "numpy==2.4.6" "pyarrow==26.0.1" "langchain==0.3.30" "langchain-core==0.3.86" \
        "langchain-community==0.3.31" "langchain-openai==0.3.35"
        # ragas 0.4.3 imports langchain_community.chat_models.vertexai, gone in 0.4
    /tmp/venv-ragas04/bin/python generate.py ragas04

    python3.11 -m venv /tmp/venv-deepeval
    /tmp/venv-deepeval/bin/pip install "deepeval==4.3.1" "pandas==3.1.1" "numpy==2.4.6"
    DEEPEVAL_TELEMETRY_OPT_OUT=YES /tmp/venv-deepeval/bin/python generate.py deepeval

    mkdir /tmp/pf && cd /tmp/pf && npm install promptfoo@0.121.20     # node 20.20.2
    python3 generate.py promptfoo      # PyYAML; writes promptfooconfig.yaml, runs promptfoo eval

Run on a UTF-8 locale (C.UTF-8): ragas 0.4's ``to_csv`` opens its file in the locale's
encoding. Every writer gets the same cases (``CASES``): passages with commas, quotes, a
newline, a ``|``, a leading ``[1]``, a backslash and non-ASCII text, one to three passages
a case. No LLM is called: where a peer's file normally comes from its generator (RAGAS 0.1
``TestsetGenerator``, RAGAS 0.4 ``Testset``, DeepEval ``Synthesizer``), the generator's own
result objects are built from ``CASES`` and written through their own methods.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

CASES: list[dict[str, Any]] = [
    {
        "question": "How much does Acme Pro cost, and is VAT included?",
        "answer": "Acme Pro costs $49 a month, billed annually; VAT is extra.",
        "reference": "Acme Pro costs $49 per month, billed annually, excluding VAT.",
        "retrieved": [
            "Acme Pro costs $49 per month, billed annually.",
            "Prices exclude VAT, which varies by country.",
        ],
        "reference_contexts": ["Acme Pro: $49/month, billed annually, VAT excluded."],
    },
    {
        "question": 'What does the manual say about the "Reset" button?',
        "answer": "Hold 'Reset' for 5 seconds.",
        "reference": 'Press and hold "Reset" for 5 seconds,\nthen wait for the light.',
        "retrieved": [
            "The manual says: \"press 'Reset' for 5 seconds\".",
            "Step 1: unplug the router.\nStep 2: wait 30 seconds.\nStep 3: plug it back in.",
        ],
        "reference_contexts": ['Hold "Reset" for 5 seconds.', "It's safe: settings aren't lost."],
    },
    {
        "question": "Quels plans sont proposés à Zürich ?",
        "answer": "Basic, Pro et Enterprise.",
        "reference": "Zürich propose Basic, Pro et Enterprise.",
        "retrieved": [
            "Plans: Basic | Pro | Enterprise",
            "Le café coûte 3 € à Zürich — naïve façade.",
            "東京の営業時間は9時から18時です。",
        ],
        "reference_contexts": ["Plans: Basic | Pro | Enterprise", "Zürich: alle Pläne verfügbar."],
    },
    {
        "question": "Where is the config file?",
        "answer": "In C:\\Acme\\config.ini.",
        "reference": "The config file is C:\\Acme\\config.ini (see [1]).",
        "retrieved": ["[1] See the FAQ, section 2: the config lives in C:\\Acme\\config.ini."],
        "reference_contexts": [
            "[1] See the FAQ, section 2: the config lives in C:\\Acme\\config.ini."
        ],
    },
]


def _out(folder: str) -> Path:
    path = HERE / folder
    path.mkdir(parents=True, exist_ok=True)
    return path


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


# --------------------------------------------------------------------------------- RAGAS 0.1


def ragas01() -> None:
    """A HF ``datasets.Dataset`` as RAGAS 0.1's ``evaluate`` takes it, written by
    ``datasets`` (``to_csv``: numpy repr lists; ``to_json``: JSON Lines) and by pandas; the
    deprecated ``ground_truths`` list column; ``Result.to_pandas()`` of an evaluation; the
    ``TestsetGenerator``'s ``TestDataset.to_pandas()``."""
    import numpy as np
    from datasets import Dataset
    from ragas.evaluation import Result
    from ragas.testset.evolutions import DataRow
    from ragas.testset.generator import TestDataset

    out = _out(f"ragas-{_version('ragas')}")
    data = {
        "question": [c["question"] for c in CASES],
        "answer": [c["answer"] for c in CASES],
        "contexts": [c["retrieved"] for c in CASES],
        "ground_truth": [c["reference"] for c in CASES],
    }
    dataset = Dataset.from_dict(data)
    dataset.to_csv(str(out / "dataset.csv"))  # datasets' own writer
    dataset.to_json(str(out / "dataset.jsonl"))
    dataset.to_pandas().to_csv(out / "dataset_pandas.csv")  # pandas, with its index

    # RAGAS 0.0.x took a list of ground truths; 0.1.22 still reads it (with a warning).
    old = Dataset.from_dict(
        {
            "question": data["question"],
            "answer": data["answer"],
            "contexts": data["contexts"],
            "ground_truths": [c["reference_contexts"] for c in CASES],
        }
    )
    old.to_csv(str(out / "ground_truths.csv"))
    old.to_json(str(out / "ground_truths.jsonl"))

    # evaluate()'s result: the data set and one column per metric.
    scores = Dataset.from_dict({"faithfulness": [1.0, 0.5, 1.0, np.nan]})
    result = Result(scores=scores, dataset=dataset)
    result.to_pandas().to_csv(out / "result_pandas.csv", index=False)

    # TestsetGenerator.generate_with_langchain_docs(...) returns a TestDataset of DataRow.
    rows = [
        DataRow(
            question=c["question"],
            contexts=c["reference_contexts"],
            ground_truth=c["reference"],
            evolution_type=("simple", "reasoning", "multi_context", "simple")[i],
            metadata=[{"source": f"docs/page{i}.md", "filename": f"docs/page{i}.md"}],
        )
        for i, c in enumerate(CASES)
    ]
    testset = TestDataset(test_data=rows)
    testset.to_pandas().to_csv(out / "testset_pandas.csv", index=False)
    testset.to_dataset().to_csv(str(out / "testset_dataset.csv"))


# --------------------------------------------------------------------------------- RAGAS 0.4


def ragas04() -> None:
    """``EvaluationDataset`` of ``SingleTurnSample`` through its own ``to_csv`` (Python
    repr lists), ``to_jsonl``, ``to_pandas().to_csv()`` and ``to_hf_dataset().to_csv()``;
    the generator's ``Testset`` through the same three."""
    from ragas import EvaluationDataset, SingleTurnSample
    from ragas.testset.synthesizers.testset_schema import Testset, TestsetSample

    out = _out(f"ragas-{_version('ragas')}")
    samples = [
        SingleTurnSample(
            user_input=c["question"],
            retrieved_contexts=c["retrieved"],
            reference_contexts=c["reference_contexts"],
            response=c["answer"],
            reference=c["reference"],
        )
        for c in CASES
    ]
    dataset = EvaluationDataset(samples=samples)
    dataset.to_csv(out / "evaluation_dataset.csv")
    dataset.to_jsonl(out / "evaluation_dataset.jsonl")
    dataset.to_pandas().to_csv(out / "evaluation_dataset_pandas.csv")
    dataset.to_hf_dataset().to_csv(str(out / "evaluation_dataset_hf.csv"))

    # TestsetGenerator.generate_with_langchain_docs(...) returns a Testset like this one.
    synthesizers = ("single_hop_specific_query_synthesizer", "multi_hop_abstract_query_synthesizer")
    testset = Testset(
        samples=[
            TestsetSample(
                eval_sample=SingleTurnSample(
                    user_input=c["question"],
                    reference_contexts=c["reference_contexts"],
                    reference=c["reference"],
                    persona_name="Support engineer",
                    query_style="PERFECT_GRAMMAR",
                    query_length="MEDIUM",
                ),
                synthesizer_name=synthesizers[i % 2],
            )
            for i, c in enumerate(CASES)
        ]
    )
    testset.to_csv(out / "testset.csv")
    testset.to_jsonl(out / "testset.jsonl")
    testset.to_pandas().to_csv(out / "testset_pandas.csv", index=False)


# ---------------------------------------------------------------------------------- DeepEval


def deepeval() -> None:
    """Goldens and test cases through ``EvaluationDataset.save_as`` in every file type the
    version offers; the ``Synthesizer``'s ``save_as`` and ``to_pandas()``."""
    from deepeval.dataset import EvaluationDataset, Golden
    from deepeval.synthesizer import Synthesizer
    from deepeval.test_case import LLMTestCase, RetrievedContextData

    out = _out(f"deepeval-{_version('deepeval')}")
    goldens = [
        Golden(
            input=c["question"],
            expected_output=c["reference"],
            context=c["reference_contexts"],
            source_file=f"docs/page{i}.md",
            additional_metadata={"topic": ("pricing", "support", "plans", "setup")[i]},
        )
        for i, c in enumerate(CASES)
    ]
    types = ("json", "csv", "jsonl")
    for file_type in types:
        EvaluationDataset(goldens=goldens).save_as(file_type, str(out), file_name="goldens")

    cases = EvaluationDataset()
    for c in CASES:
        cases.add_test_case(
            LLMTestCase(
                input=c["question"],
                actual_output=c["answer"],
                expected_output=c["reference"],
                context=c["reference_contexts"],
                retrieval_context=c["retrieved"],
            )
        )
    # A retriever's passages with their source (deepeval 3.7+): save_as writes a marker.
    cases.add_test_case(
        LLMTestCase(
            input="Which regions does Acme ship to?",
            actual_output="Europe and North America.",
            expected_output="Acme ships to Europe and North America.",
            retrieval_context=[
                RetrievedContextData(
                    source="kb/shipping.md", context="Acme ships to Europe, and North America."
                ),
                RetrievedContextData(source="kb/returns.md", context="Returns take 14 days."),
            ],
        )
    )
    for file_type in types:
        cases.save_as(file_type, str(out), file_name="test_cases", include_test_cases=True)

    # Synthesizer.generate_goldens_from_docs(...) fills synthetic_goldens like these.
    synthesizer = Synthesizer(model=_offline_model(), async_mode=False)
    synthesizer.synthetic_goldens = [
        Golden(
            input=c["question"],
            expected_output=c["reference"],
            context=c["reference_contexts"],
            source_file=f"docs/page{i}.md",
            additional_metadata={"evolutions": ["Reasoning"], "synthetic_input_quality": 0.9},
        )
        for i, c in enumerate(CASES)
    ]
    for file_type in types:
        synthesizer.save_as(file_type, str(out), file_name="synthesizer", quiet=True)
    synthesizer.to_pandas().to_csv(out / "synthesizer_pandas.csv", index=False)


def _offline_model() -> Any:
    from deepeval.models import DeepEvalBaseLLM

    class OfflineModel(DeepEvalBaseLLM):
        """A model that is never called: the Synthesizer wants one to be built."""

        def __init__(self) -> None:
            super().__init__("offline")

        def load_model(self) -> None:
            return None

        def generate(self, prompt: str, schema: Any = None) -> str:
            raise RuntimeError("not called")

        async def a_generate(self, prompt: str, schema: Any = None) -> str:
            raise RuntimeError("not called")

        def get_model_name(self) -> str:
            return "offline"

    return OfflineModel()


# ---------------------------------------------------------------------------------- promptfoo


def promptfoo() -> None:
    """A promptfoo config whose tests carry the cases as vars (the passages one ``context``
    text, a blank line between them: a list var would make promptfoo run the test once per
    passage), evaluated by promptfoo itself against its ``echo`` provider (offline), its
    results written with ``eval -o`` in every output type."""
    import yaml

    bin_dir = Path(os.environ.get("PROMPTFOO_DIR", "/tmp/pf")) / "node_modules" / ".bin"
    version = subprocess.run(
        [str(bin_dir / "promptfoo"), "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[0]
    out = _out(f"promptfoo-{version}")
    config = {
        "description": "evalhouse peer fixture",
        "prompts": ["Answer from the context.\nContext: {{context}}\nQuestion: {{question}}"],
        "providers": ["echo"],
        # The graders ask the echo provider too: no key, no network, and every result a
        # pass or a fail rather than an error.
        "defaultTest": {"options": {"provider": "echo"}},
        "tests": [
            {
                "vars": {"question": c["question"], "context": "\n\n".join(c["retrieved"])},
                "assert": [
                    {"type": "factuality", "value": c["reference"]},
                    {"type": "contains", "value": c["question"][:10]},
                ],
            }
            for c in CASES
        ],
    }
    (out / "promptfooconfig.yaml").write_text(
        yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}
    for name in ("results.json", "results.jsonl", "results.csv", "results.yaml"):
        subprocess.run(
            [
                str(bin_dir / "promptfoo"), "eval", "-c", "promptfooconfig.yaml",
                "-o", name, "--no-cache", "--no-table", "--no-write", "--no-progress-bar",
            ],
            cwd=out, env=env, check=False,
        )  # fmt: skip


WRITERS = {"ragas01": ragas01, "ragas04": ragas04, "deepeval": deepeval, "promptfoo": promptfoo}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in WRITERS:
        sys.exit(f"usage: generate.py {'|'.join(WRITERS)}")
    WRITERS[sys.argv[1]]()
    print(json.dumps({"wrote": sys.argv[1]}))
