"""Population GD of the k-head model at a grid of step sizes, all replicas at once (SPEC A4, A5,
A6; the ``kparity-steps`` experiment, A1.k).

Every replica (seed) ``e`` starts once and runs plain GD on the exact population loss at every
step size ``eta_g`` of a grid: ``E x G`` *runs*. Per run it records the first step whose
certified error (SPEC A6) is ``<= tol``, success after exactly one step, and collapse (two heads
on one support bit) after the last step. ``reference_grid_descent`` is the loop this replaces
(``Descent`` on a ``G``-fold copy of the model), kept for the equivalence test and the
benchmark; ``grid_descent`` gives the same runs to float64 rounding, with less work:

* the embeddings are held once, not ``G`` times, and multiplied in *blocks* of runs (a few
  runs of one replica at large ``d``, several whole replicas at small ``d``: ``_Runs``): one
  product per block instead of one per run, so ``V`` is read a few times a step per replica
  instead of ``G`` times, and the product runs at the BLAS rate;
* the loss's gradient in the weights is written by hand (``exact.kparity.loss_and_gradient``),
  and so is the softmax's backward (``gamma * (g - <gamma, g>)``): autograd through the power
  sums held ``3^H x d`` tensors per run and cost several times the forward;
* a run whose step leaves ``theta`` unchanged to the last bit is *frozen*: the next step starts
  from the same ``theta``, so it computes the same gradient and leaves it unchanged again, for
  ever (a saturated softmax, every weight exactly 0 or 1, has gradient exactly 0). Its certified
  error and its ``theta`` are final; it is set aside, exactly (a block's products still hold
  its frozen runs, so that no run's rounding depends on which others froze). Over the full
  preset's grid and 1000 steps, 20% to 50% of the run-steps remain (measured);
* the work runs in chunks of whole blocks (``chunk_bytes``), so the per-step intermediates stay
  small however large ``E x G x d``;
* the stopping rule (every run has succeeded at some step) is kept up to date as the runs go,
  not recomputed from the whole trace at every step.

What it does not do: stop a run that has succeeded (its collapse is read after the last step,
which later steps may change) or one that has not yet (it may still succeed); the steps run are
the budget unless every run succeeds or one diverges, as in ``Descent``. Only softmax attention
and the population gradient (what ``kparity-steps`` runs); ``train.xor_train`` does the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from .. import attention
from ..configs import XorTrainConfig
from ..core.device import resolve_device, resolve_dtype
from ..core.validate import require
from ..exact.kparity import loss_and_gradient
from ..metrics.parity import best_assignment, collapsed
from ..models.query_heads import QueryHeads
from ..tasks.parity import SparseParity
from .parity import label_correlation

CHUNK_BYTES = {"cpu": 48 << 20, "cuda": 2 << 30}
"""The intermediates of one chunk of runs, about: small enough for the CPU's cache and memory,
large enough that a GPU is kept busy and Python's per-chunk cost is spread."""
BLOCK_WORK = 1 << 18
MIN_BLOCK = 4
"""A block of runs (``_Runs``) holds ``max(MIN_BLOCK, BLOCK_WORK / (H d m))`` runs (rounded down
to whole replicas when that is more than a replica's ``G``): small blocks let frozen runs skip
their products, but each product call costs Python and BLAS set-up time, and fewer than about 12
rows run at a fraction of the BLAS rate (measured, ``m = 32``)."""
WORK_PER_ROW = 48
"""``d``-long float rows held per run while a chunk is evaluated (scores, weights, gradients and
the loss's power rows, for up to 4 heads), for sizing the chunks."""


@dataclass
class GridRuns:
    """Per replica and grid point (``E x G``): the first step with certified error ``<= tol``
    (``-1``: not reached), success after exactly one step, and collapse after the last step."""

    first: np.ndarray
    one_step: np.ndarray
    collapsed: np.ndarray
    steps_run: int
    evaluated: int  # run-steps evaluated (initial evaluation included): the work actually done
    theta: np.ndarray  # E x G x H x m, after the last step
    diverged_at: int | None = None

    def steps(self) -> list[list[int | None]]:
        """Steps to success as ``E x G`` lists (``None``: not reached)."""
        return [[None if t < 0 else int(t) for t in row] for row in self.first.tolist()]


def grid_descent(
    config: XorTrainConfig,
    etas: list[float],
    budget: int,
    *,
    freeze: bool = True,
    chunk_bytes: int | None = None,
) -> GridRuns:
    """GD of every replica of ``config`` (its ``d``, ``m``, ``k = H``, seeds, start and device,
    softmax attention) at every step size of ``etas``, up to ``budget`` steps, on the exact
    population gradient (module docstring). ``freeze``: set aside runs that stopped moving (no
    change to the result; off only to check that)."""
    require(config.attention == "softmax", "grid descent needs softmax attention")
    require(config.gradient == "population", "grid descent needs the population gradient")
    runs, theta, eta = _start(config, etas, chunk_bytes)
    state = _Descent.first_evaluation(runs, theta)
    while state.diverged_at is None and state.steps < budget and not state.all_reached():
        if not state.step(runs, theta, eta, freeze, budget):
            break
    every = torch.arange(len(theta), device=theta.device)
    fold = torch.cat(
        [
            collapsed(runs.weights(theta, every[start:stop]), runs.support[start:stop])
            for start, stop, _ in runs.chunks(every)
        ]
    )
    shape = (config.seeds, len(etas))
    return GridRuns(
        first=state.first.numpy().reshape(shape),
        one_step=state.one.numpy().reshape(shape),
        collapsed=fold.numpy().reshape(shape),
        steps_run=state.steps,
        evaluated=state.evaluated,
        theta=theta.cpu().numpy().reshape(*shape, config.k, config.m),
        diverged_at=state.diverged_at,
    )


def _start(
    config: XorTrainConfig, etas: list[float], chunk_bytes: int | None
) -> tuple[_Runs, torch.Tensor, torch.Tensor]:
    """The runs (replica ``e`` at step size ``g`` is run ``e G + g``), their starting queries
    and their step sizes, on ``config``'s device."""
    from .xor_train import initial_state

    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    model, support, theta0 = initial_state(config, device, dtype)
    assert isinstance(model.V, torch.Tensor)  # held, never streamed here
    E, G, H, m, d = config.seeds, len(etas), config.k, config.m, config.d
    corr = label_correlation(model, SparseParity.of(config))
    runs_per_block = max(MIN_BLOCK, -(-BLOCK_WORK // (H * d * m)))
    block = runs_per_block if runs_per_block < G else G * max(1, runs_per_block // G)
    runs = _Runs(model.V, support.repeat_interleave(G, 0), corr, config.success_tol, block)
    budget_bytes = chunk_bytes or CHUNK_BYTES.get(device.type, CHUNK_BYTES["cpu"])
    runs.chunk_runs = max(1, budget_bytes // (WORK_PER_ROW * H * d * dtype.itemsize))
    theta = theta0.repeat_interleave(G, 0)  # run r = e G + g
    eta = torch.tensor(etas, dtype=dtype, device=device).repeat(E)[:, None, None]
    return runs, theta, eta


@dataclass
class _Descent:
    """Where the descent of all runs stands: each run's first step at success (-1: none yet),
    success at the last step evaluated and after the first step, the runs still moving and
    their gradients, the run-steps evaluated, the steps taken and where it diverged."""

    first: torch.Tensor
    now: torch.Tensor
    one: torch.Tensor
    active: torch.Tensor
    grad: torch.Tensor
    evaluated: int = 0
    steps: int = 0
    diverged_at: int | None = None

    @classmethod
    def first_evaluation(cls, runs: _Runs, theta: torch.Tensor) -> _Descent:
        """The state at step 0: every run evaluated at its start."""
        n = len(theta)
        active = torch.arange(n, device=theta.device)
        grad, reached, finite = runs.evaluate(theta, active)
        first = torch.full((n,), -1, dtype=torch.long)
        now = torch.zeros(n, dtype=torch.bool)
        state = cls(first, now, torch.zeros(n, dtype=torch.bool), active, grad, len(active))
        if not finite:
            state.diverged_at = 0
        else:
            now[:] = reached
            first[reached] = 0
        return state

    def all_reached(self) -> bool:
        return bool((self.first >= 0).all())

    def step(
        self, runs: _Runs, theta: torch.Tensor, eta: torch.Tensor, freeze: bool, budget: int
    ) -> bool:
        """One GD step of the runs still moving, then their evaluation; ``False`` once the
        descent ends here (diverged, or every run frozen)."""
        old = theta[self.active]
        stepped = old - eta[self.active] * self.grad
        if not bool(torch.isfinite(stepped).all()):
            self.diverged_at = self.steps + 1
            return False
        theta[self.active] = stepped
        if freeze:
            moved = _bits(stepped).ne(_bits(old)).flatten(1).any(dim=1)
            self.active, self.grad = self.active[moved], self.grad[moved]
        self.steps += 1
        if len(self.active) == 0:  # every run frozen: the rest of the budget changes nothing
            if self.steps == 1:
                self.one[:] = self.now
            self.steps = self.steps if self.all_reached() else budget
            return False
        self.grad, reached, finite = runs.evaluate(theta, self.active)
        self.evaluated += len(self.active)
        if not finite:  # as ``Descent``: the step is taken, its evaluation not counted
            self.diverged_at, self.steps = self.steps, self.steps - 1
            return False
        cpu_active = self.active.cpu()
        self.now[cpu_active] = reached
        self.first[cpu_active[reached & (self.first[cpu_active] < 0)]] = self.steps
        if self.steps == 1:
            self.one[:] = self.now
        return True


def _bits(x: torch.Tensor) -> torch.Tensor:
    """``x``'s bits as integers of its width (so ``-0.0`` and ``0.0`` differ)."""
    return x.view({8: torch.int64, 4: torch.int32, 2: torch.int16}[x.element_size()])


class _Runs:
    """The runs' shared pieces and the products with ``V``, in fixed *blocks* of consecutive runs:
    ``block`` runs of one replica (the last of a replica shorter) when ``block < G``, else
    ``block // G`` whole replicas (one batched product). A block's products always hold all its
    runs' query vectors, frozen ones included: a product's rows round the same only in a call of
    the same shape at the same place (MKL rounds a row differently when the count of rows
    changes, measured), so a run frozen or not never changes another's rounding."""

    def __init__(
        self, V: torch.Tensor, support: torch.Tensor, corr: float, tol: float, block: int
    ) -> None:
        self.V, self.support, self.corr, self.tol = V, support, corr, tol
        E, G = V.shape[0], support.shape[0] // V.shape[0]
        self.grid, self.chunk_runs = G, 1
        runs = torch.arange(E * G, device=support.device)
        if block < G:  # blocks within a replica
            per = -(-G // block)
            self.first = [e for e in range(E) for _ in range(per)]  # first replica of a block
            self.last = [e + 1 for e in self.first]
            self.start = [e * G + i * block for e in range(E) for i in range(per)]
            self.size = [min(block, G - i * block) for _ in range(E) for i in range(per)]
            self.block_of = (runs // G) * per + (runs % G) // block
        else:  # blocks of whole replicas
            group = block // G
            self.first = list(range(0, E, group))
            self.last = [min(e + group, E) for e in self.first]
            self.start = [e * G for e in self.first]
            self.size = [(last - e) * G for e, last in zip(self.first, self.last, strict=True)]
            self.block_of = runs // (group * G)

    def product(self, b: int, x: torch.Tensor, transpose: bool) -> torch.Tensor:
        """Block ``b``'s product with its replicas' ``V`` (``x``: its runs' ``size x H x width``):
        ``x V^T`` (``transpose``, scores) or ``x V`` (back-projection), ``size x H x ...``."""
        replicas = self.last[b] - self.first[b]
        V = self.V[self.first[b] : self.last[b]]
        factor = V.transpose(1, 2) if transpose else V
        out = torch.empty(
            replicas,
            x.shape[0] * x.shape[1] // replicas,
            factor.shape[2],
            dtype=x.dtype,
            device=x.device,
        )
        _product(x.reshape(replicas, -1, x.shape[2]), factor, out)
        return out.view(x.shape[0], x.shape[1], -1)

    def chunks(self, rows: torch.Tensor) -> Iterator[tuple[int, int, list[_Member]]]:
        """``(start, stop, members)``: consecutive stretches of ``rows`` (sorted run indices) made
        of whole blocks, about ``chunk_runs`` runs each; a member is ``(block, runs, local)``,
        ``local`` the positions of its runs in the block, or ``None`` for all of them."""
        counts = torch.bincount(self.block_of[rows], minlength=len(self.size)).tolist()
        start, stop = 0, 0
        members: list[_Member] = []
        for b, c in enumerate(counts):
            if not c:
                continue
            if members and stop - start + c > self.chunk_runs:
                yield start, stop, members
                start, members = stop, []
            local = None if c == self.size[b] else rows[stop : stop + c] - self.start[b]
            members.append((b, c, local))
            stop += c
        if members:
            yield start, stop, members

    def scores(self, theta: torch.Tensor, rows: torch.Tensor, members: list[_Member]):
        """``V_e theta_r`` for the runs ``rows`` of ``members``: ``N x H x d``."""
        out = torch.empty(
            len(rows), theta.shape[1], self.V.shape[1], dtype=theta.dtype, device=theta.device
        )
        at = 0
        for b, c, local in members:
            first = self.start[b]
            full = self.product(b, theta[first : first + self.size[b]], transpose=True)
            out[at : at + c] = full if local is None else full[local]
            at += c
        return out

    def backproject(self, g_scores: torch.Tensor, members: list[_Member]) -> torch.Tensor:
        """``sum_a g_a v_a`` for each run of ``members`` (``g_scores``: their ``N x H x d``), in
        whole-block products as ``scores`` (frozen runs' rows zero)."""
        out = torch.empty(
            *g_scores.shape[:2], self.V.shape[2], dtype=g_scores.dtype, device=g_scores.device
        )
        at = 0
        for b, c, local in members:
            if local is None:
                out[at : at + c] = self.product(b, g_scores[at : at + c], transpose=False)
            else:
                full = g_scores.new_zeros(self.size[b], *g_scores.shape[1:])
                full[local] = g_scores[at : at + c]
                out[at : at + c] = self.product(b, full, transpose=False)[local]
            at += c
        return out

    def weights(self, theta: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """The attention weights of runs ``rows`` (one chunk's worth)."""
        members = [member for _, _, ms in self.chunks(rows) for member in ms]
        return attention.softmax(self.scores(theta, rows, members))

    def evaluate(
        self, theta: torch.Tensor, rows: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, bool]:
        """At the runs ``rows``: the population gradient in ``theta`` (``N x H x m``), whether the
        certified error is ``<= tol`` (``N``, CPU) and whether the loss and gradient are finite."""
        grad = torch.empty(len(rows), *theta.shape[1:], dtype=theta.dtype, device=theta.device)
        reached = torch.empty(len(rows), dtype=torch.bool)
        finite = True
        for start, stop, members in self.chunks(rows):
            run = rows[start:stop]
            gamma = attention.softmax(self.scores(theta, run, members))
            support = self.support[run]
            loss, g_gamma = loss_and_gradient(gamma, support, self.corr)
            g_scores = gamma * (g_gamma - (gamma * g_gamma).sum(dim=-1, keepdim=True))
            grad[start:stop] = self.backproject(g_scores, members)
            finite = finite and bool(
                torch.isfinite(loss).all() and torch.isfinite(grad[start:stop]).all()
            )
            reached[start:stop] = (best_assignment(gamma, support)[0] <= self.tol).cpu()
        return grad, reached, finite


_Member = tuple[int, int, "torch.Tensor | None"]


def _product(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    """``out = a @ b`` on 64-byte aligned operands, as ``embeddings.per_replica_matmul`` does, so
    the rounding does not depend on where in memory the operands happen to lie."""
    a, b = (x if x.data_ptr() % 64 == 0 else x.clone() for x in (a, b))
    if out.data_ptr() % 64 == 0:
        torch.matmul(a, b, out=out)
    else:
        out.copy_(a @ b)


# --- the loop this replaced (kparity-steps until grid_descent), for the equivalence test and bench


def reference_grid_descent(config: XorTrainConfig, etas: list[float], budget: int) -> GridRuns:
    """``Descent`` on the ``TrainingObjective`` of a ``G``-fold copy of the model (grid-major), as
    ``kparity-steps`` ran it before ``grid_descent``, with its results in ``GridRuns``."""
    from .descent import Descent
    from .xor_train import Batches, TrainingObjective, initial_state

    device, dtype = resolve_device(config.device), resolve_dtype(config.dtype)
    model, support, theta = initial_state(config, device, dtype)
    G, E = len(etas), config.seeds
    wide = QueryHeads(model.V.repeat(G, 1, 1), model.attention, model.sign)  # grid-major
    support, theta = support.repeat(G, 1), theta.repeat(G, 1, 1)
    eta = torch.tensor(etas, dtype=dtype, device=device)
    eta = eta.repeat_interleave(E)[:, None, None]
    objective = TrainingObjective(config, wide, support, Batches(config, support, device, dtype))

    def watch(theta: torch.Tensor) -> torch.Tensor:
        return best_assignment(objective.weights(theta), support)[0].cpu() <= config.success_tol

    def all_done(run: Descent) -> bool:
        return bool(torch.stack(run.trace).any(dim=0).all())

    run = Descent(objective, theta, eta, watch=watch)
    run.run_to(budget, until=all_done)
    reached = torch.stack(run.trace).numpy()  # steps x (G E)
    first = np.where(reached.any(axis=0), reached.argmax(axis=0), -1)
    one = reached[1] if len(reached) > 1 else np.zeros(G * E, dtype=bool)
    fold = collapsed(wide.weights(run.theta), support).numpy()

    def grid(values: np.ndarray) -> np.ndarray:  # grid-major runs to E x G
        return values.reshape(G, E, *values.shape[1:]).swapaxes(0, 1)

    return GridRuns(
        first=grid(first),
        one_step=grid(one),
        collapsed=grid(fold),
        steps_run=run.steps,
        evaluated=G * E * len(run.losses),
        theta=grid(run.theta.cpu().numpy()),
        diverged_at=run.diverged_at,
    )
