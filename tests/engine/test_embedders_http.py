"""The OpenAI-compatible embedder against a loopback server speaking /v1/embeddings."""

from __future__ import annotations

import base64
import json
import time

import numpy as np
import pytest

from engine.embedders.base import Embedder, EmbedderError
from engine.embedders.cache import CachedEmbedder
from engine.embedders.factory import build_embedder
from engine.embedders.keyword import KeywordEmbedder
from engine.embedders.local import LocalEmbedder
from engine.embedders.openai_compat import OpenAICompatEmbedder
from engine.secrets import redact
from tests.loopback_llm import LoopbackLLM, Reply, loopback_llm  # noqa: F401

SECRET = "sk-test-very-secret-123"


def make(llm: LoopbackLLM, **kw: object) -> OpenAICompatEmbedder:
    options: dict[str, object] = {
        "base_url": llm.url,
        "api_key_env": "EVALHOUSE_TEST_EMBED_KEY",
        "timeout": 2.0,
        "max_retries": 2,
        "backoff_base": 0.01,
        "backoff_max": 1.0,
    }
    options.update(kw)
    return OpenAICompatEmbedder("text-embedding-3-small", **options)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALHOUSE_TEST_EMBED_KEY", SECRET)


def test_wire_format_normalisation_and_key(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    loopback_llm.script(Reply(embedding=[[3.0, 4.0], [0.0, 2.0]]))
    embedder = make(loopback_llm)
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(["a", "b"])
    assert vectors.dtype == np.float32
    assert np.allclose(vectors, [[0.6, 0.8], [0.0, 1.0]])
    request = loopback_llm.requests[0]
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "text-embedding-3-small", "input": ["a", "b"]}
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert embedder.name == "openai:text-embedding-3-small"
    assert embedder.default_threshold == 0.75
    assert embedder.tokens_used > 0


def test_out_of_order_indices_are_restored(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    body = {
        "data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}],
        "usage": {"prompt_tokens": 2, "total_tokens": 2},
    }
    loopback_llm.script(Reply(raw_body=json.dumps(body).encode()))
    vectors = make(loopback_llm).embed(["first", "second"])
    assert np.allclose(vectors, [[1.0, 0.0], [0.0, 1.0]])


def test_base_url_with_v1_suffix(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    make(loopback_llm, base_url=loopback_llm.url + "/v1/").embed(["x"])
    assert loopback_llm.requests[0].path == "/v1/embeddings"


def test_429_honours_retry_after(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    loopback_llm.script(Reply.rate_limited(retry_after=0.4), Reply(embedding=[[1.0, 0.0]]))
    start = time.perf_counter()
    vectors = make(loopback_llm, backoff_base=0.001).embed(["x"])
    assert time.perf_counter() - start >= 0.4
    assert loopback_llm.count == 2
    assert vectors.shape == (1, 2)


def test_500_is_retried(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    loopback_llm.script(Reply.server_error(500), Reply.server_error(503), Reply())
    assert make(loopback_llm).embed(["x"]).shape == (1, 16)
    assert loopback_llm.count == 3


def test_timeout_is_retried(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    loopback_llm.script(Reply.slow(2.0), Reply())
    vectors = make(loopback_llm, timeout=0.3).embed(["x"])
    assert vectors.shape == (1, 16)
    assert loopback_llm.count == 2


def test_malformed_bodies_fail_after_retries(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    wrong_count = Reply(embedding=[[1.0, 0.0], [0.0, 1.0]])
    not_numbers = Reply(raw_body=b'{"data": [{"index": 0, "embedding": ["a", "b"]}]}')
    loopback_llm.script(Reply.malformed(), wrong_count, not_numbers)
    with pytest.raises(EmbedderError, match="after 3 attempts") as caught:
        make(loopback_llm).embed(["only one"])
    assert loopback_llm.count == 3
    assert "malformed" in str(caught.value)


def test_persistent_failure_raises_and_never_leaks_the_key(
    loopback_llm: LoopbackLLM,  # noqa: F811
) -> None:
    loopback_llm.script(*[Reply.server_error(500)] * 3)
    with pytest.raises(EmbedderError) as caught:
        make(loopback_llm).embed(["x"])
    assert SECRET not in str(caught.value)
    echo = json.dumps({"error": f"bad key {SECRET}"}).encode()
    loopback_llm.script(Reply(status=401, raw_body=echo))
    count = loopback_llm.count
    with pytest.raises(EmbedderError, match="HTTP 401") as caught:
        make(loopback_llm).embed(["x"])
    assert loopback_llm.count == count + 1  # a 401 is not retried
    assert SECRET not in str(caught.value) and "***" in str(caught.value)


def test_batches_of_at_most_256(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    texts = [f"text {i}" for i in range(600)]
    vectors = make(loopback_llm).embed(texts)
    assert vectors.shape == (600, 16)
    sizes = [len(r.body["input"]) for r in loopback_llm.requests if r.body]
    assert sizes == [256, 256, 88]
    # Rows stay in input order across batches (the server hashes each text).
    single = make(loopback_llm).embed(["text 599"])
    assert np.allclose(vectors[599], single[0])


def test_no_key_sends_no_authorization(
    loopback_llm: LoopbackLLM,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("EVALHOUSE_TEST_EMBED_KEY")
    make(loopback_llm).embed(["x"])
    assert "authorization" not in loopback_llm.requests[0].headers


def test_factory(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    cached = build_embedder("local", Path(str(tmp_path)))
    assert isinstance(cached, CachedEmbedder) and isinstance(cached.inner, LocalEmbedder)
    assert isinstance(build_embedder("local", None), LocalEmbedder)
    monkeypatch.setenv("EVALHOUSE_EMBEDDINGS_BASE_URL", "http://127.0.0.1:9/v1")
    remote = build_embedder("openai:text-embedding-3-small", None)
    assert isinstance(remote, OpenAICompatEmbedder)
    assert remote.name == "openai:text-embedding-3-small"
    assert remote._url == "http://127.0.0.1:9/v1/embeddings"
    for bad in ("openai", "openai:", "keyword", "hf:model", ""):
        with pytest.raises(ValueError, match="unknown embedder"):
            build_embedder(bad, None)


def test_keyword_embedder_is_deterministic_and_lexical() -> None:
    embedder = KeywordEmbedder()
    v = embedder.embed(["Free shipping on orders", "orders ship free", "giraffes are tall", ""])
    assert np.allclose(
        v, embedder.embed(["Free shipping on orders", "orders ship free", "giraffes are tall", ""])
    )
    assert float(v[0] @ v[1]) > 0.3 > float(v[0] @ v[2])
    assert not v[3].any()


def test_giving_up_names_the_attempts_once(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    loopback_llm.script(*[Reply.server_error(503)] * 3)
    with pytest.raises(EmbedderError) as caught:
        make(loopback_llm).embed(["x"])
    assert str(caught.value) == (
        f"embeddings from {loopback_llm.url}/v1/embeddings: HTTP 503: "
        '{"error": {"message": "internal error", "type": "server_error"}} (after 3 attempts)'
    )


def test_a_password_in_the_base_url_is_sent_but_never_shown(
    loopback_llm: LoopbackLLM,  # noqa: F811
) -> None:
    host = loopback_llm.url.removeprefix("http://")
    password = "pw-in-url-31337"
    embedder = make(loopback_llm, base_url=f"http://svc:{password}@{host}")
    embedder.embed(["x"])
    # httpx sends the URL's credentials as HTTP Basic; that form is masked too
    sent = loopback_llm.requests[0].headers["authorization"]
    assert sent == "Basic " + base64.b64encode(f"svc:{password}".encode()).decode()
    assert redact(sent) == "Basic ***"
    loopback_llm.script(Reply(status=400, raw_body=f"bad request to {password}".encode()))
    with pytest.raises(EmbedderError) as caught:
        embedder.embed(["y"])
    assert password not in str(caught.value)
    assert f"http://svc:***@{host}/v1/embeddings" in str(caught.value)
    embedder.close()


def test_a_closed_embedder_can_be_used_again(loopback_llm: LoopbackLLM) -> None:  # noqa: F811
    embedder = make(loopback_llm)
    embedder.embed(["a"])
    embedder.close()
    assert embedder.embed(["after close"]).shape == (1, 16)
    embedder.close()
    assert loopback_llm.count == 2
