"""Training: one gradient step and gradient descent over ensembles (SPEC A5, B3)."""
