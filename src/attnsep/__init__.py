"""attnsep: the sparse-XOR and sparse-token-selection separations as rerunnable experiments."""

__version__ = "0.1.0"
