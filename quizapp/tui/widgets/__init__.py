"""Widgets the screens share; each carries its own DEFAULT_CSS."""
