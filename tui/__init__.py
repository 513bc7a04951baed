"""Cranfield's Textual UI: a thin layer over the engine."""
