"""One-layer, one-head selector with merged ``W = KᵀQ`` (SPEC B2).

Shapes (ensemble-first): ``W`` is ``E x D x D`` with ``D = d + m_p``, rows and columns
ordered content then position; tokens ``X`` are ``E x B x T x d``, encodings ``P`` are
``E x B x T x m_p`` and subsets ``y`` are ``E x B x q`` (0-based indices).

* token ``z_i = (x_i ; p_i)``, query ``z_q = (0 ; u_y)`` with ``u_y = Σ_{j∈y} p_j``;
* logits ``a_i = z_iᵀ W z_q``, weights ``s = softmax(a)`` (stable), output ``f = Σ_i s_i x_i``.

Because the query's content part is zero, only the columns ``d:`` of ``W`` act: the
content-row block ``W[:d, d:]`` makes the logits depend on the tokens, the position block
``W[d:, d:]`` does not, and ``W[:, :d]`` never enters.
"""

from __future__ import annotations

import torch

from ..configs import TRAINABLE
from ..core.validate import one_of, require


def query(P: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``u_y = Σ_{j∈y} p_j``: ``(E, B, T, m_p)``, ``(E, B, q)`` -> ``(E, B, m_p)``."""
    return P.gather(-2, y.unsqueeze(-1).expand(*y.shape, P.shape[-1])).sum(dim=-2)


def logits(W: torch.Tensor, X: torch.Tensor, P: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``a_i = z_iᵀ W z_q`` (SPEC B2), shape ``E x B x T``."""
    d, m_p = X.shape[-1], P.shape[-1]
    require(
        W.shape[-2:] == (d + m_p, d + m_p),
        f"W must be E x {d + m_p} x {d + m_p} for d={d}, m_p={m_p}, got {tuple(W.shape)}",
    )
    v = torch.einsum("eim,ebm->ebi", W[:, :, d:], query(P, y))  # W z_q, E x B x D
    return torch.einsum("ebtk,ebk->ebt", X, v[..., :d]) + torch.einsum(
        "ebtm,ebm->ebt", P, v[..., d:]
    )


def position_logits(W_pp: torch.Tensor, P: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Logits from the position block only, ``a_i = p_iᵀ W_pp u_y`` (token-independent)."""
    v = torch.einsum("eij,ebj->ebi", W_pp, query(P, y))
    return torch.einsum("ebtm,ebm->ebt", P, v)


def forward(
    W: torch.Tensor, X: torch.Tensor, P: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(f, s)``: output ``E x B x d`` and attention weights ``E x B x T``."""
    s = torch.softmax(logits(W, X, P, y), dim=-1)  # subtracts the max: stable
    return torch.einsum("ebt,ebtk->ebk", s, X), s


def ground_truth(d: int, m_p: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """``W*``: identity on the position block, zero elsewhere (``D x D``, SPEC B2)."""
    W = torch.zeros(d + m_p, d + m_p, dtype=dtype)
    W[d:, d:] = torch.eye(m_p, dtype=dtype)
    return W


def trainable_mask(d: int, m_p: int, trainable: str) -> torch.Tensor:
    """``1`` where ``W`` trains: everything (``full``) or the position block (``position``)."""
    one_of("trainable", trainable, TRAINABLE)
    if trainable == "full":
        return torch.ones(d + m_p, d + m_p, dtype=torch.float64)
    mask = torch.zeros(d + m_p, d + m_p, dtype=torch.float64)
    mask[d:, d:] = 1.0
    return mask
