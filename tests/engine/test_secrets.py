"""The secret registry: what is registered is masked in every form a server may echo."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from engine.secrets import env_secret, redact, redact_url, register, register_url


def test_a_registered_secret_is_masked_wherever_it_appears() -> None:
    secret = "sk-unit/abc+def=ghi"
    register(secret)
    text = f"auth={secret}; again: Bearer {secret}."
    assert redact(text) == "auth=***; again: Bearer ***."


def test_url_encoded_and_base64_forms_are_masked() -> None:
    secret = "p@ss word/with+signs"
    register(secret)
    encoded = quote(secret, safe="")
    b64 = base64.b64encode(secret.encode()).decode()
    assert redact(f"?key={encoded}&x=1") == "?key=***&x=1"
    assert redact(f'{{"token": "{b64}"}}') == '{"token": "***"}'
    unpadded = base64.urlsafe_b64encode(secret.encode()).decode().rstrip("=")
    assert redact(unpadded) == "***"


def test_a_longer_secret_containing_a_shorter_one_is_masked_whole() -> None:
    register("abcd-1234")
    register("abcd-1234-efgh-5678")
    assert redact("x abcd-1234-efgh-5678 y abcd-1234 z") == "x *** y *** z"


def test_short_and_empty_values_are_not_registered() -> None:
    register("ab")
    register("")
    register(None)
    assert redact("ab cab grab") == "ab cab grab"


def test_url_credentials_are_registered_and_masked() -> None:
    url = "https://reporter:hunter2%21x@rag.example/ask?q=1"
    register_url(url)
    assert redact("login as reporter with hunter2!x failed") == "login as reporter with *** failed"
    basic = base64.b64encode(b"reporter:hunter2!x").decode()
    assert redact(f"Authorization: Basic {basic}") == "Authorization: Basic ***"
    assert redact_url(url) == "https://reporter:***@rag.example/ask?q=1"
    # a URL nobody registered still prints without its password
    assert redact_url("http://u:never-registered@h/x") == "http://u:***@h/x"
    assert redact_url("https://rag.example/ask") == "https://rag.example/ask"


def test_env_secret_registers_what_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALHOUSE_TEST_SECRET", "env-secret-77aa")
    assert env_secret("EVALHOUSE_TEST_SECRET") == "env-secret-77aa"
    assert redact("got env-secret-77aa") == "got ***"
    monkeypatch.setenv("EVALHOUSE_TEST_SECRET", "")
    assert env_secret("EVALHOUSE_TEST_SECRET") is None
    monkeypatch.delenv("EVALHOUSE_TEST_SECRET")
    assert env_secret("EVALHOUSE_TEST_SECRET") is None
