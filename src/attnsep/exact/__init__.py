"""Closed forms: population losses, enumeration and bounds (SPEC A4, B3, B4)."""
