"""Where the hosted and local model providers answer by default: one home for the base URLs
every judge, embedder, target and verifier falls back to when no ``*_BASE_URL`` is set."""

from __future__ import annotations

OPENAI_BASE_URL = "https://api.openai.com"
"""OpenAI's API (the chat, embeddings and target clients add ``/v1`` themselves)."""
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
"""Anthropic's messages API."""
OLLAMA_BASE_URL = "http://127.0.0.1:11434"
"""A local Ollama server."""

API_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""The environment variable holding each hosted provider's API key (keys are read from
the environment only, never from files)."""
