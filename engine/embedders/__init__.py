"""Embedders: a Protocol (``base``), the local ONNX model, an OpenAI-compatible client."""
