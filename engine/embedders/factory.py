"""Build the embedder a run asks for (``--embedder local|openai:MODEL``), cached on disk."""

from __future__ import annotations

import os
from pathlib import Path

from engine.embedders.base import Embedder
from engine.embedders.cache import CachedEmbedder
from engine.embedders.local import LocalEmbedder
from engine.embedders.openai_compat import DEFAULT_BASE_URL, OpenAICompatEmbedder
from engine.providers import API_KEY_ENV

BASE_URL_ENV = "EVALHOUSE_EMBEDDINGS_BASE_URL"


def build_embedder(
    spec: str,
    cache_dir: Path | None,
    *,
    base_url: str | None = None,
    api_key_env: str = API_KEY_ENV["openai"],
    threads: int | None = None,
) -> Embedder:
    """The embedder for ``spec`` (``local`` or ``openai:MODEL``), wrapped in a disk cache
        under ``cache_dir`` when one is given. The base URL of ``openai:`` defaults to
        ``$EVALHOUSE_EMBEDDINGS_BASE_URL``, else https://api.openai.com. ``threads``: the local
    model's threads per call (None: its default)."""
    kind, _, model = spec.strip().partition(":")
    embedder: Embedder
    if kind == "local" and not model:
        embedder = LocalEmbedder() if threads is None else LocalEmbedder(threads=threads)
    elif kind == "openai" and model.strip():
        url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        embedder = OpenAICompatEmbedder(model.strip(), base_url=url, api_key_env=api_key_env)
    else:
        raise ValueError(
            f"unknown embedder {spec!r}: use 'local' or 'openai:MODEL' "
            "(for example openai:text-embedding-3-small)"
        )
    if cache_dir is None:
        return embedder
    return CachedEmbedder(embedder, cache_dir)
