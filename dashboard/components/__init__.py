"""Reusable pieces of the pages: badges, the highlighter, error display, downloads, links."""
