"""The authors' earlier k-parity model, rebuilt from its description (ensemble-batched).

The description: ``k`` heads; each head's attention matrix is ``4 x 4`` with only two trainable
entries; each position is embedded in four numbers (the bit, one minus the bit, and the cosine
and sine of the position's angle); a fixed, hand-set ReLU read-out. Where it leaves a choice
open, this module takes the one that lets the model represent ``k``-parity (*choices*):

* **Position angle** ``phi_i = 2 pi i / n``: the ``n`` positions evenly on the circle, so every
  position is the unique maximizer of ``cos(phi - psi)`` for some ``psi``.
* **Query and trainable entries.** Position ``i`` of ``b in {0, 1}^n`` is embedded as
  ``e_i = (b_i, 1 - b_i, cos phi_i, sin phi_i)``. The query is a read token at angle 0 with no
  content, ``q = (0, 0, 1, 0)``; head ``h``'s matrix ``A_h`` is zero except the two trainable
  entries ``A_h[2, 2] = a_h`` and ``A_h[2, 3] = c_h``, so the score of position ``i`` is
  ``q^T A_h e_i = a_h cos phi_i + c_h sin phi_i = r_h cos(phi_i - psi_h)``: the head attends
  around the angle ``psi_h``, and to one position alone as ``r_h`` grows. (Entries in the
  content rows would make the scores depend on the bits, which parity cannot use.)
* **Value**: the bit ``b_i`` (the first coordinate of ``e_i``); head ``h`` outputs
  ``z_h = sum_i softmax(s_h)_i b_i`` in ``[0, 1]``.
* **Read-out** (fixed ReLUs): with ``t = sum_h z_h``,
  ``o = t + 2 sum_{j=1..k} (-1)^j relu(t - j)``, the zig-zag that equals ``t mod 2`` at every
  integer ``t`` in ``[0, k]``: the parity of the attended bits. The label is the parity bit
  ``(sum_{a in S} b_a) mod 2``, the prediction ``o > 1/2``.
* **Initialization**: ``a_h, c_h`` i.i.d. standard normal, replica ``e`` from stream
  ``(seed, e, "v1-init")``.

Trainable parameters: ``2k``.
"""

from __future__ import annotations

import math

import torch

from ..core.rng import generator


def angles(n: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """``phi_i = 2 pi i / n``."""
    return 2 * math.pi * torch.arange(n, dtype=dtype) / n


def embed(bits: torch.Tensor) -> torch.Tensor:
    """``(b, 1 - b, cos phi, sin phi)`` per position: ``... x n`` bits to ``... x n x 4``."""
    phi = angles(bits.shape[-1], bits.dtype).to(bits.device).expand_as(bits)
    return torch.stack([bits, 1 - bits, phi.cos(), phi.sin()], dim=-1)


def attention_matrices(params: torch.Tensor) -> torch.Tensor:
    """The ``E x k x 4 x 4`` matrices: zero but for ``[2, 2] = a`` and ``[2, 3] = c``."""
    A = params.new_zeros(*params.shape[:-1], 4, 4)
    A[..., 2, 2], A[..., 2, 3] = params[..., 0], params[..., 1]
    return A


READ_QUERY = (0.0, 0.0, 1.0, 0.0)
"""The read token: angle 0, no content."""


def scores(params: torch.Tensor, n: int) -> torch.Tensor:
    """``s_h,i = q^T A_h e_i`` for every head: ``E x k x n``. The content part of ``e_i`` meets
    only zero entries, so the scores do not depend on the input."""
    q = params.new_tensor(READ_QUERY)
    phi = angles(n, params.dtype).to(params.device)
    positional = torch.stack([phi * 0, phi * 0, phi.cos(), phi.sin()], dim=-1)  # n x 4
    return torch.einsum("r,ekrc,ic->eki", q, attention_matrices(params), positional)


def readout(t: torch.Tensor, k: int) -> torch.Tensor:
    """``t + 2 sum_{j=1..k} (-1)^j relu(t - j)``: ``t mod 2`` at the integers ``0..k``."""
    out = t.clone()
    for j in range(1, k + 1):
        out = out + 2 * (-1) ** j * torch.relu(t - j)
    return out


def forward(params: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
    """The output ``o`` for bits ``E x N x n`` (``{0, 1}``): ``E x N``."""
    gamma = torch.softmax(scores(params, bits.shape[-1]), dim=-1)  # E x k x n
    z = torch.bmm(bits, gamma.transpose(1, 2))  # E x N x k: each head reads its bit
    return readout(z.sum(dim=-1), params.shape[1])


def initial_params(seed: int, replicas: int, k: int, first_replica: int = 0) -> torch.Tensor:
    """``E x k x 2``: ``(a_h, c_h)`` i.i.d. standard normal per replica stream."""
    rows = [
        torch.randn(
            k, 2, generator=generator(seed, first_replica + e, "v1-init"), dtype=torch.float64
        )
        for e in range(replicas)
    ]
    return torch.stack(rows)


def parity_bits(bits: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """The label ``(sum_{a in S} b_a) mod 2`` for bits ``E x N x n``, support ``E x k``."""
    idx = support[:, None, :].expand(bits.shape[0], bits.shape[1], support.shape[1])
    return torch.remainder(torch.gather(bits, 2, idx.to(bits.device)).sum(dim=2), 2)
