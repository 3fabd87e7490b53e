"""Judges: the protocols (``base``, ``conversation``), the judges over HTTP (``http/``), the
local judge (``local/``) and the factory that picks one from a run's settings."""
