"""The engine version (one place; read by the cache key and the CLI)."""
__version__ = "0.1.0"
