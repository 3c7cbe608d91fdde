"""Target 16: the sign error rate of a one-step replica (``metrics.parity.sign_error``, SPEC
A7.6), by which separation-xor's transformer search and finite-samples' probes measure test
sign error.

Each random byte gives eight coordinates and ``gamma_h . x`` sums one table lookup per byte.
Ours reads one table per head with ``numpy.take``; the baseline is the earlier implementation,
kept here: one ``torch`` table of all heads, indexed at once (``table[raw + offsets]``). Both
draw the same inputs from the same generators and must give the same errors. At ``d = 65536``
(separation-xor's largest full job) the test took about 90% of the transformer's search.
"""

from __future__ import annotations

import torch
from common import THREADS, interleaved, median_ratio, row, seconds

from attnsep.core.rng import generator
from attnsep.metrics.parity import SIGN_TEST_BYTES, sign_error
from attnsep.tasks.parity import BYTE_SIGNS

SIZES = ((8192, 8), (65536, 2))
"""``(d, replicas)``: separation-xor's largest standard and full ``d``."""
SAMPLES = 8192
"""Test inputs per replica (separation-xor's ``test_samples``)."""


def baseline_sign_error(gamma, support, sign, samples, generators) -> torch.Tensor:
    """The earlier ``sign_error``: all heads' lookups from one ``torch`` table."""
    E, heads, d = gamma.shape
    width = (d + 7) // 8
    rows = max(1, SIGN_TEST_BYTES // width)
    offsets = 256 * torch.arange(width)
    padded = torch.nn.functional.pad(gamma.double(), (0, 8 * width - d))
    errors = torch.empty(E, dtype=torch.float64)
    for e, gen in enumerate(generators):
        table = torch.einsum("bt,hct->cbh", BYTE_SIGNS, padded[e].reshape(heads, width, 8))
        table = table.reshape(width * 256, heads)
        wrong = 0
        for first in range(0, samples, rows):
            n = min(rows, samples - first)
            raw = torch.randint(0, 256, (n, width), generator=gen, dtype=torch.uint8).long()
            f = sign * table[raw + offsets].sum(dim=1).prod(dim=1)
            bits = [(raw[:, a // 8] >> (a % 8)) & 1 for a in support[e].tolist()]
            y = sign * (2.0 * torch.stack(bits, dim=1) - 1).prod(dim=1)
            wrong += int((torch.sign(f) != y).sum())
        errors[e] = wrong / samples
    return errors


def one_size(d: int, replicas: int, rounds: int) -> dict:
    """The row of one ``d``: the same replicas and inputs on both sides."""
    gen = torch.Generator().manual_seed(d)
    gamma = torch.randn(replicas, 2, d, dtype=torch.float64, generator=gen)
    support = torch.stack([torch.randperm(d, generator=gen)[:2] for _ in range(replicas)])
    gamma[torch.arange(replicas)[:, None], torch.arange(2), support] += d**0.5  # errors ~0.2

    def gens() -> list[torch.Generator]:
        return [generator(0, e, "one-step-test") for e in range(replicas)]

    out: dict = {}
    t_ours, t_base = interleaved(
        lambda: out.update(ours=sign_error(gamma, support, -1, SAMPLES, gens())),
        lambda: out.update(base=baseline_sign_error(gamma, support, -1, SAMPLES, gens())),
        rounds,
        warmup=False,
    )
    same = torch.equal(out["ours"], out["base"])
    ratio = median_ratio(t_base, t_ours)
    note = (
        f"{replicas} replicas x {SAMPLES} inputs, 2 heads; errors identical: {same} "
        f"(mean {out['ours'].mean():.3f}); {rounds} rounds, torch threads={THREADS}"
    )
    target = ">= 2x, same errors"
    met = ratio >= 2 and same
    return row(f"sign error rate d={d}", seconds(t_ours), seconds(t_base), ratio, target, met, note)


def run(rounds: int = 3) -> list[dict]:
    return [one_size(d, replicas, rounds) for d, replicas in SIZES]
