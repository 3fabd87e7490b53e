"""One loader per peer format, each a ``FormatLoader`` (detect + load)."""
