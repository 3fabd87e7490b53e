"""Judges: a Protocol (``base``), the deterministic local judge, HTTP LLM judges."""
