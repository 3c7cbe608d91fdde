"""Metrics per replica (SPEC A6, B2)."""
