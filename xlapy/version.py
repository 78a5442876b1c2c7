"""The package version: cache keys and generated headers record it."""

__version__ = "0.1.0"
