"""What removes the collapse of the k heads: the *capped* step (SPEC A1, A5, A6; the
``kparity-steps`` finding, A1.k).

Why replicas collapse (measured, ``xor_kparity.config.Config``): with a large constant step, the
first steps saturate each head's softmax on the support bit it already preferred at the start,
before the loss's coupling of the heads (the permanent of their weights on the support, and the
overlap penalty of the square term, ``exact.kparity``) can push two heads that preferred the same
bit apart; a saturated softmax then has no gradient left to do it (two heads on one support bit,
loss about 2: SPEC A6's collapse). Small constant steps, close to gradient flow, rarely collapse,
but need tens of steps.

The capped step (*choice*, beyond the papers): plain GD, ``theta <- theta - eta_t grad L``, with
the step shortened per run so that no score ``s_h[a] = v_a . theta_h`` moves by more than
``cap`` in one step: ``eta_t = min(eta, cap / max_{h,a} |v_a . grad_h L|)``. The head with the
steepest score gradient moves by ``cap``, the others less, so the heads commit to support bits
over a few steps, each seeing where the others went. ``capped_descent`` runs every replica at
every grid step size, on the exact population gradient (``exact.kparity``) or on one fixed set
of ``samples`` inputs per replica (the set ``train.xor_train`` draws for gradient ``fixed``),
with the cap or without it (``cap=None``: plain GD, which for the population gradient is
``train.grid_descent``'s runs to float64 rounding). A run stops moving once it has succeeded
(its later steps change no record the finding reads) or when its next step is not finite.
"""

from __future__ import annotations

import torch

from .. import attention
from ..configs import XorTrainConfig
from ..core.device import resolve_device, resolve_dtype
from ..exact.kparity import loss_and_gradient
from ..metrics.parity import best_assignment, collapsed, top_positions
from ..tasks.parity import SparseParity
from .grid_descent import GridRuns
from .parity import label_correlation
from .xor_train import Batches, initial_state

CHUNK_NUMBERS = 1 << 22
"""Most numbers of one score-sized array (``replicas x grid x H x d``) held at once: the replicas
run in chunks of whole replicas under it (each replica's runs are independent of the others)."""


def capped_descent(
    config: XorTrainConfig, etas: list[float], budget: int, cap: float | None
) -> GridRuns:
    """GD of every replica of ``config`` (its ``d``, ``m``, ``k = H``, seeds, start, gradient
    ``population`` or ``fixed`` with ``samples``) at every step size of ``etas``, up to
    ``budget`` steps, each step capped in the scores at ``cap`` (``None``: uncapped; the chosen
    cap is ``xor_kparity.config.SCORE_CAP``)."""
    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    model, support, theta0 = initial_state(config, device, dtype)
    assert isinstance(model.V, torch.Tensor)  # held, never streamed here
    data = Batches(config, support, device, dtype).train
    corr = label_correlation(model, SparseParity.of(config))
    E, G, H, d = config.seeds, len(etas), config.k, config.d
    chunk = max(1, CHUNK_NUMBERS // (G * H * d))
    parts = []
    for start in range(0, E, chunk):
        rows = slice(start, min(start + chunk, E))
        part = Runs(model.V[rows], support[rows], theta0[rows], G, corr, model.sign)
        if data is not None:
            part.data = (data[0][rows], data[1][rows])
        eta = torch.tensor(etas, dtype=dtype, device=device)
        parts.append(part.run(eta, budget, cap, config.success_tol))
    cat = lambda name: torch.cat([getattr(p, name) for p in parts])  # noqa: E731
    return GridRuns(
        first=cat("first").numpy(),
        one_step=cat("one").numpy(),
        collapsed=cat("fold").numpy(),
        steps_run=max(p.steps for p in parts),
        evaluated=sum(p.evaluated for p in parts),
        theta=cat("theta").cpu().numpy(),
    )


class Runs:
    """Some replicas' ``E x G`` runs (``theta``: ``E x G x H x m``) and their records."""

    def __init__(self, V, support, theta0, grid: int, corr: float, sign: int) -> None:
        self.V, self.corr, self.sign = V, corr, sign
        E = V.shape[0]
        self.support = support.repeat_interleave(grid, 0)  # run r = e G + g
        self.theta = theta0[:, None].repeat(1, grid, 1, 1)
        self.data: tuple[torch.Tensor, torch.Tensor] | None = None
        self.first = torch.full((E, grid), -1, dtype=torch.long)
        self.one = torch.zeros(E, grid, dtype=torch.bool)
        self.steps = self.evaluated = 0

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """``V_e x`` for each run's rows of ``x`` (``E x G x H x m``): ``E x G x H x d``."""
        E, G, H, m = x.shape
        return torch.bmm(x.reshape(E, G * H, m), self.V.transpose(1, 2)).view(E, G, H, -1)

    def gradient(self, gamma: torch.Tensor) -> torch.Tensor:
        """The loss's gradient in the weights (``E x G x H x d``): exact, or on the fixed set."""
        E, G, H, d = gamma.shape
        if self.data is None:
            _, grad = loss_and_gradient(gamma.reshape(E * G, H, d), self.support, self.corr)
            return grad.view(E, G, H, d)
        x, y = self.data  # as train.xor_train.sample_gradient, every grid point in one product
        proj = torch.bmm(x, gamma.reshape(E, G * H, d).transpose(1, 2)).view(E, -1, G, H)
        residual = self.sign * proj.prod(dim=3) - y[:, :, None]  # E x n x G
        others = torch.stack([_without(proj, h).prod(dim=3) for h in range(H)], dim=3)
        coef = (2 * self.sign / x.shape[1]) * residual[..., None] * others
        return torch.bmm(coef.reshape(E, -1, G * H).transpose(1, 2), x).view(E, G, H, d)

    def run(self, eta: torch.Tensor, budget: int, cap: float | None, tol: float) -> Runs:
        """Every run at its step size of ``eta`` (``G``) until it succeeds (certified error ``<=
        tol``), its step is not finite, or ``budget`` steps; then the records."""
        E, G, H, d = *self.first.shape, self.theta.shape[2], self.V.shape[1]
        moving = torch.ones(E, G, dtype=torch.bool)
        while True:
            gamma = attention.softmax(self.scores(self.theta))
            bound = best_assignment(gamma.reshape(E * G, H, d), self.support)[0]
            reached = (bound <= tol).view(E, G).cpu()
            self.evaluated += int(moving.sum())
            self.first[reached & (self.first < 0)] = self.steps
            if self.steps == 1:
                self.one = reached
            moving &= self.first < 0
            if self.steps == budget or not bool(moving.any()):
                break
            g = self.gradient(gamma)
            g_scores = gamma * (g - (gamma * g).sum(dim=-1, keepdim=True))
            grad = torch.bmm(g_scores.reshape(E, G * H, d), self.V).view(self.theta.shape)
            step = eta.expand(E, G)
            if cap is not None:  # the largest score change per unit step (0: no move at all)
                steepest = self.scores(grad).abs().flatten(2).amax(dim=2)
                step = torch.minimum(step, cap / steepest)
            step = torch.where(moving.to(step.device), step, torch.zeros_like(step))
            new = self.theta - step[..., None, None] * grad
            finite = torch.isfinite(new).flatten(2).all(dim=2)
            self.theta = torch.where(finite[..., None, None], new, self.theta)
            moving &= finite.cpu()
            self.steps += 1
        self.fold = collapsed(gamma.reshape(E * G, H, d), self.support).view(E, G)
        return self


def _without(proj: torch.Tensor, head: int) -> torch.Tensor:
    """``proj`` (``... x H``) without head ``head``'s column."""
    return torch.cat([proj[..., :head], proj[..., head + 1 :]], dim=-1)


def shared_support_bit(config: XorTrainConfig, theta) -> torch.Tensor:
    """``E x G``: whether, at the query vectors ``theta`` (``E x G x H x m``, a ``GridRuns``'s
    last), two heads put their largest weight on the same support bit (SPEC A6's collapse,
    whatever the other heads do; ``metrics.parity.collapsed`` also asks every head to be on the
    support)."""
    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    model, support, _ = initial_state(config, device, dtype)
    theta = torch.as_tensor(theta, dtype=dtype, device=device)
    E, G, H, m = theta.shape
    chunk = max(1, CHUNK_NUMBERS // (G * H * config.d))
    out = []
    for start in range(0, E, chunk):
        rows = slice(start, min(start + chunk, E))
        scores = torch.bmm(theta[rows].reshape(-1, G * H, m), model.V[rows].transpose(1, 2))
        top = top_positions(attention.softmax(scores).view(-1, H, config.d)).cpu()
        on = top[:, :, None] == support[rows].cpu().repeat_interleave(G, 0)[:, None, :]
        out.append((on.sum(dim=1) >= 2).any(dim=1).view(-1, G))
    return torch.cat(out)
