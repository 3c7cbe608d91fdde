"""Population GD of one attention map at every step size of a grid at once (A7.3).

``attention-maps`` used to run one ``Descent`` per step size, each step two products per replica
with ``V`` of only ``H = 2`` rows (scores ``theta V^T`` and back-projection ``g V``): 70% of a
full-size job's time was these thin products, which read all of ``V`` for 2 rows each
(profiled, d = 2048, m = 64, 128 seeds). ``GridDescent`` stacks the step sizes still running
into the rows of one product per replica (``G H`` rows), so ``V`` is read once a step for the
whole grid, and the map, the loss and their gradients run once on the stacked scores.

The loss's gradient in the weights is written by hand for two heads (``loss_and_gradient``;
autograd through SPEC A4's closed form cost 5x more, measured), and so is softmax's backward
(``gamma * (g - <gamma, g>)``); the other maps' backward stays autograd's. The maps and the
loss act on each ``d``-long row alone, so batching the grid changes no row's formula; a product
with more rows may round differently (MKL picks another kernel) and the hand-written gradients
round differently from autograd's, so a run's numbers equal the old loop's to float64 rounding
(step counts, divergence and outcomes identical at the tested sizes: ``tests/
test_maps_descent.py``). Each step size keeps ``Descent``'s semantics: it stops at the first
non-finite loss, gradient or parameter (``diverged_at``), records the loss after every step, and
continues where it stopped when asked for more steps.

A step size whose step leaves every replica's ``theta`` unchanged to the last bit is *frozen*
(a saturated softmax or erf has gradient exactly 0): the loop it replaced evaluated the same
``theta`` again, in a product of the same shape, so got the same loss and gradient, for ever;
here that loss is repeated without evaluating (measured at d = 1024, 16 seeds: 13 of softmax's
29 step sizes frozen after 5 steps, 4 of erf's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ... import attention
from ...embeddings import per_replica_matmul
from ...exact.parity import population_loss

if TYPE_CHECKING:
    from ...models.query_heads import QueryHeads

CHUNK_BYTES = {"cpu": 16 << 20, "cuda": 1 << 30}
"""The stacked scores of one chunk of replicas, about (the map's and the loss's intermediates are
a few times this): keeps the per-step working set small however large ``E G d`` (on a GPU, large
enough to keep it busy)."""


def loss_and_gradient(
    gamma: torch.Tensor, support: torch.Tensor, corr: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The exact population loss (``exact.parity.population_loss``) and its gradient in the
    weights ``gamma`` (``N x H x d``), by hand for two heads (SPEC A4's closed form
    ``L = |g|^2 |h|^2 + 2 (g.h)^2 - 2 sum_a g_a^2 h_a^2 - 2 c (g_i h_j + g_j h_i) + 1``:
    ``dL/dg = 2 |h|^2 g + 4 (g.h) h - 4 g h^2 - 2 c (h_j e_i + h_i e_j)``, and ``h`` alike), by
    autograd otherwise."""
    if gamma.shape[1] != 2 or support.shape[1] != 2:
        with torch.enable_grad():
            leaf = gamma.detach().requires_grad_(True)
            loss = population_loss(leaf, support, corr)
            (grad,) = torch.autograd.grad(loss.sum(), leaf)
        return loss.detach(), grad
    g, h = gamma[:, 0], gamma[:, 1]
    g2, h2 = g * g, h * h
    gg, hh, gh = g2.sum(-1), h2.sum(-1), torch.linalg.vecdot(g, h)
    diag = torch.linalg.vecdot(g2, h2)
    gs, hs = g.gather(1, support), h.gather(1, support)
    cross = gs[:, 0] * hs[:, 1] + gs[:, 1] * hs[:, 0]
    loss = gg * hh + 2 * gh**2 - 2 * diag - 2 * corr * cross + 1
    grad = torch.empty_like(gamma)
    for out, x, y, y2, yy in ((grad[:, 0], g, h, h2, hh), (grad[:, 1], h, g, g2, gg)):
        torch.mul(y2, -4.0, out=out)  # in place, one pass each: 4 x (|y|^2 / 2 - y^2) + 4 (g.h) y
        out.add_((2 * yy)[:, None]).mul_(x).addcmul_((4 * gh)[:, None], y)
    grad[:, 0].scatter_add_(1, support, (-2 * corr) * hs.flip(1))
    grad[:, 1].scatter_add_(1, support, (-2 * corr) * gs.flip(1))
    return loss, grad


class GridRun:
    """One step size's run, read as a ``Descent`` is (``eta``, ``losses``, ``theta``,
    ``after_one``, ``diverged_at``, ``steps``, ``steps_to``)."""

    def __init__(self, grid: GridDescent, index: int, eta: float) -> None:
        self.grid, self.index, self.eta = grid, index, eta
        self.losses: list[torch.Tensor] = []
        self.after_one: torch.Tensor | None = None
        self.diverged_at: int | None = None

    @property
    def theta(self) -> torch.Tensor:
        return self.grid.theta[:, self.index]

    @property
    def steps(self) -> int:
        return len(self.losses) - 1

    def steps_to(self, target: float) -> list[int | None]:
        """Per replica, the first step count with loss <= ``target`` (``None``: not reached)."""
        reached = torch.stack(self.losses) <= target  # steps x E
        first = reached.double().argmax(dim=0)
        return [int(t) if reached[t, e] else None for e, t in enumerate(first.tolist())]

    def run_to(self, steps: int) -> None:
        self.grid.run_to(steps, [self.index])


class GridDescent:
    """GD on the exact population loss (SPEC A4) of ``model`` (held ``V``, any attention map) at
    every step size of ``etas``, all replicas, from ``theta0`` (``E x H x m``)."""

    def __init__(
        self,
        model: QueryHeads,
        support: torch.Tensor,
        corr: float,
        theta0: torch.Tensor,
        etas: list[float],
    ) -> None:
        assert isinstance(model.V, torch.Tensor)  # held, never streamed here
        self.V, self.map = model.V, attention.get(model.attention)
        self.softmax = model.attention == "softmax"
        self.support, self.corr = support, corr
        E, H, m = theta0.shape
        self.theta = theta0[:, None].expand(E, len(etas), H, m).clone()  # E x G x H x m
        self.grad = torch.zeros_like(self.theta)
        self.runs = [GridRun(self, g, eta) for g, eta in enumerate(etas)]
        self._evaluate(list(range(len(etas))))

    def run_to(self, steps: int, indices: list[int] | None = None) -> None:
        """Step the runs ``indices`` (default all) until each has ``steps`` steps or diverged."""
        chosen = range(len(self.runs)) if indices is None else indices
        while True:
            live = [
                g for g in chosen if self.runs[g].diverged_at is None and self.runs[g].steps < steps
            ]
            if not live:
                return
            idx = torch.tensor(live, device=self.theta.device)
            eta = torch.tensor(
                [self.runs[g].eta for g in live], dtype=self.theta.dtype, device=self.theta.device
            )
            stepped = self.theta[:, idx] - eta[None, :, None, None] * self.grad[:, idx]
            ok = torch.isfinite(stepped).flatten(2).all(dim=2).all(dim=0).tolist()
            old = self.theta[:, idx]
            still = (_bits(stepped) == _bits(old)).flatten(2).all(dim=2).all(dim=0).tolist()
            moved = []
            for j, g in enumerate(live):
                run = self.runs[g]
                if not ok[j]:
                    run.diverged_at = len(run.losses)
                    continue
                self.theta[:, g] = stepped[:, j]
                if run.after_one is None:
                    run.after_one = stepped[:, j].clone()
                if still[j]:  # frozen: the same theta, so the same loss and gradient
                    run.losses.append(run.losses[-1])
                else:
                    moved.append(g)
            if moved:
                self._evaluate(moved)

    def _evaluate(self, indices: list[int]) -> None:
        """Loss and gradient at the runs ``indices``; a run with a non-finite value diverges."""
        E, _, H, m = self.theta.shape
        d, A = self.V.shape[1], len(indices)
        idx = torch.tensor(indices, device=self.theta.device)
        theta = self.theta[:, idx]  # E x A x H x m
        budget = CHUNK_BYTES.get(self.theta.device.type, CHUNK_BYTES["cpu"])
        chunk = max(1, budget // (A * H * d * self.theta.element_size()))
        losses, grads = [], []
        for start in range(0, E, chunk):
            stop = min(E, start + chunk)
            block = theta[start:stop].reshape(stop - start, A * H, m)
            V = self.V[start:stop]
            scores = per_replica_matmul(block, V.transpose(1, 2)).view(stop - start, A, H, d)
            support = self.support[start:stop].repeat_interleave(A, 0)
            if self.softmax:  # both gradients by hand
                gamma = attention.softmax(scores)
                loss, grad_gamma = loss_and_gradient(gamma.view(-1, H, d), support, self.corr)
                grad_gamma = grad_gamma.view(gamma.shape)
                inner = (gamma * grad_gamma).sum(dim=-1, keepdim=True)
                grad_scores = gamma * (grad_gamma - inner)
            else:  # the loss's by hand, the map's by autograd
                with torch.enable_grad():
                    leaf = scores.detach().requires_grad_(True)
                    gamma = self.map(leaf)
                    loss, grad_gamma = loss_and_gradient(
                        gamma.detach().reshape(-1, H, d), support, self.corr
                    )
                    (grad_scores,) = torch.autograd.grad(
                        gamma, leaf, grad_outputs=grad_gamma.reshape(gamma.shape)
                    )
            back = per_replica_matmul(grad_scores.reshape(stop - start, A * H, d), V)
            losses.append(loss.detach().view(stop - start, A))
            grads.append(back.view(stop - start, A, H, m))
        loss_all, grad_all = torch.cat(losses), torch.cat(grads)  # E x A, E x A x H x m
        finite = (
            (torch.isfinite(loss_all).all(dim=0) & torch.isfinite(grad_all).flatten(2).all(dim=2))
            .all(dim=0)
            .tolist()
        )
        loss_cpu = loss_all.cpu()
        for j, g in enumerate(indices):
            run = self.runs[g]
            if not finite[j]:
                run.diverged_at = len(run.losses)
                continue
            run.losses.append(loss_cpu[:, j].clone())
            self.grad[:, g] = grad_all[:, j]


def _bits(x: torch.Tensor) -> torch.Tensor:
    """``x``'s bits as integers of its width (so ``-0.0`` and ``0.0`` differ)."""
    return x.view({8: torch.int64, 4: torch.int32, 2: torch.int16}[x.element_size()])
