"""evalhouse: the composition root (the ``evalhouse`` command) and the version."""

__version__ = "0.1.0"
