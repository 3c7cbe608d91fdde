"""Data: sparse parity (SPEC A1) and sparse token selection (SPEC B1)."""
