"""Ensemble-batched fully-connected ReLU nets, the FCN baselines (SPEC A7.6, B5.4).

``E`` independent nets share one set of tensors with a leading replica axis. The default is
the two-layer net of SPEC A7.6, ``f(x) = Σ_k a_k relu(w_k·x + b_k) + c``; ``depth`` stacks
more hidden ReLU layers of the same width. The output has ``d_out`` coordinates: ``1`` for
sparse XOR, ``d`` for token selection (SPEC B5.4).

Initialization is PyTorch's ``nn.Linear`` default: every weight and bias of a layer with
fan-in ``n`` is ``Uniform(−1/√n, 1/√n)``. Replica ``e`` draws all of its layers, in order,
from the stream ``(seed, e, "fcn-init")``, so a replica's net never depends on ``E``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..core.rng import generator
from ..core.validate import int_at_least


def count(d_in: int, width: int, d_out: int = 1, depth: int = 1) -> int:
    """Trainable parameters of one net; ``width·(d_in + 2) + 1`` for two layers, ``d_out = 1``."""
    sizes = layer_sizes(d_in, width, d_out, depth)
    return sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))


def layer_sizes(d_in: int, width: int, d_out: int = 1, depth: int = 1) -> list[int]:
    """``[d_in, width, ..., width, d_out]`` with ``depth`` hidden layers."""
    int_at_least("d_in", d_in, 1)
    int_at_least("width", width, 1)
    int_at_least("d_out", d_out, 1)
    int_at_least("depth", depth, 1)
    return [d_in] + [width] * depth + [d_out]


@dataclass
class MLP:
    """``E`` ReLU nets: ``weights[l]`` is ``E x fan_in x fan_out``, ``biases[l]`` ``E x fan_out``.

    Layer ``l`` maps ``h`` to ``h @ weights[l] + biases[l]``; ReLU after every layer but the last.
    """

    weights: list[torch.Tensor]
    biases: list[torch.Tensor]

    @classmethod
    def init(
        cls,
        replicas: int,
        d_in: int,
        width: int,
        d_out: int = 1,
        depth: int = 1,
        *,
        seed: int = 0,
        first_replica: int = 0,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
    ) -> MLP:
        """PyTorch-default init; replica ``e`` draws from ``(seed, first_replica + e, "fcn-init")``.

        Drawn in float64 on the CPU, then cast and moved, so every dtype and device starts from
        the same numbers.
        """
        sizes = layer_sizes(d_in, width, d_out, depth)
        per_replica = []
        for e in range(first_replica, first_replica + replicas):
            gen = generator(seed, e, "fcn-init")
            layers = []
            for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
                bound = 1.0 / math.sqrt(fan_in)
                w = torch.rand(fan_in, fan_out, generator=gen, dtype=torch.float64)
                b = torch.rand(fan_out, generator=gen, dtype=torch.float64)
                layers.append((w.mul_(2 * bound).sub_(bound), b.mul_(2 * bound).sub_(bound)))
            per_replica.append(layers)
        weights = [torch.stack([r[i][0] for r in per_replica]) for i in range(len(sizes) - 1)]
        biases = [torch.stack([r[i][1] for r in per_replica]) for i in range(len(sizes) - 1)]
        return cls(
            [w.to(dtype=dtype, device=device) for w in weights],
            [b.to(dtype=dtype, device=device) for b in biases],
        )

    @property
    def replicas(self) -> int:
        return self.weights[0].shape[0]

    def parameters(self) -> list[torch.Tensor]:
        """All trainable tensors (each with the replica axis first)."""
        return [*self.weights, *self.biases]

    def count(self) -> int:
        """Trainable parameters of one replica, counted on the tensors."""
        return sum(p[0].numel() for p in self.parameters())

    def requires_grad_(self, flag: bool = True) -> MLP:
        for p in self.parameters():
            p.requires_grad_(flag)
        return self

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``E x n x d_in`` -> ``E x n x d_out``: ReLU hidden layers, linear output layer."""
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            x = torch.relu(affine(x, w, b))
        w, b = self.weights[-1], self.biases[-1]
        if w.shape[-1] == 1:
            # A scalar output as a product and a sum over the last axis: a matrix-vector bmm
            # takes another BLAS path when E = 1, which would break replica independence.
            return (x * w.transpose(1, 2)).sum(dim=-1, keepdim=True) + b.unsqueeze(1)
        return torch.baddbmm(b.unsqueeze(1), x, w)


NARROW = 16
"""A hidden layer at most this wide is computed as ``(wᵀ xᵀ)ᵀ``: for a narrow layer the product with
``x`` on the right, and its weight gradient ``gᵀ x``, are the fast BLAS shapes (measured, one
thread, forward and backward at ``n = 128-512, d_in = 256-1024``: 3.4-6.2x faster at widths 2
and 4, 1.1-1.8x at 16; at 64 and wider ``x w`` is as fast or faster, 1.0-2.6x)."""


def affine(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``x @ w + b`` per replica (``E x n x fan_in``, ``E x fan_in x fan_out``, ``E x fan_out``)."""
    if w.shape[-1] <= NARROW:
        return torch.bmm(w.transpose(1, 2), x.transpose(1, 2)).transpose(1, 2) + b.unsqueeze(1)
    return torch.baddbmm(b.unsqueeze(1), x, w)
