"""The PE width a trained selector needs: ``m_p*`` by bisection, each probe trained to
convergence — by SGD to a stopping rule, or as population gradient descent
(:func:`population_threshold`) (SPEC B5.2, Part C, Part D).

**Training** (SPEC B3, position block only, from ``W = 0``): gradient descent on the loss per
coordinate (the loss over ``d``), exact over the Gaussian tokens and Monte Carlo over ``(y,
PE)``, from the rate ``lr = lr_per_dim · m_p`` (adapted per replica, below). With the position
block alone the loss is ``d`` times a function of ``W`` that does not involve ``d``, so the
trajectory of ``W``, every stopping decision and hence ``m_p*`` are the same for every ``d``
(tested); only the token block, not trained here, could make ``m_p*`` depend on ``d``. The
logits are ``a_i = p_i · v`` with ``v = W u_y``. Off the subset, ``p_i`` is isotropic and
independent of ``v``, so ``a_i = ‖v‖ t_i`` with ``t_i`` one coordinate of an encoding (the law
of ``exact/products.py``): a sequence costs ``O(q m + m² + T)`` instead of ``O(T m)``, which
makes ``T = 1024`` affordable. The loss keeps its law exactly, and autograd's gradient ``t_i v̂
u_yᵀ`` is the full-draw gradient ``p_i u_yᵀ`` averaged over the component of ``p_i`` orthogonal
to ``v`` (symmetric, independent of every logit): an unbiased estimate of the same population
gradient, with less noise (tested against full draws).

**Stopping rule** (*choice*): after every ``chunk`` steps each replica's loss is evaluated on one
fixed *monitor* draw (the same sequences every time, so successive values differ by training,
not by sampling). A chunk that raised a replica's monitor loss is undone and its rate halved; a
chunk that lowered it multiplies the rate by ``grow`` (the "bold driver": plain GD from ``W = 0``
crawls at large ``T``, where the gradient is of order ``1/T``, and a fixed rate fast enough for
that start overshoots later). A chunk whose gain is below ``plateau`` times both the current
loss and the gain since ``W = 0`` (the second keeps the slow start from reading as flat) is a
*plateau*: the first ``anneals`` plateaus divide the rate by ``anneal_factor`` and stop its
growth (a stochastic gradient at the bold driver's rate stalls on its own noise floor, which
shrinks with the rate); the next one stops the replica. A replica stops, and keeps its ``W``,
at the first of: monitor loss ``<= reached x target x`` uniform (rule ``reached``: the monitor
loss never rises, so it has succeeded); within ``near_best`` of the ``W = αI`` family's best
loss at ``(T, q, m_p)`` (``near-best``); a plateau after the annealing (``plateau``); or
``max_steps`` (``cap``) (the state: :class:`BoldDriver`). Success is judged on an independent
*eval* draw: loss ``<= target x`` uniform.

Randomness: replica ``e`` draws batch ``key`` from stream ``(seed, e, "select-threshold", T, q,
m_p, kind, *key)``; its trajectory does not depend on how many replicas run beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from ..configs import PE_KINDS, POSITION_LR_PER_DIM
from ..configs import SELECTION_RIVAL_MIN_ALPHA as RIVAL_MIN_ALPHA
from ..configs import SELECTION_TARGET as TARGET
from ..core.rng import stream_seed
from ..core.validate import int_at_least, one_of, positive_finite, require
from ..exact import products
from ..exact.family import FamilyBest, best_family_loss
from ..exact.family_law import best_law_loss
from ..exact.selection_bounds import uniform_attention_loss
from ..metrics import stats
from ..metrics.stats import LINEAR_LOG, POWER
from .search import Probe, probe_matrix, smallest_passing

RATE = 0.9
"""``m_p*``: the smallest width whose success rate over the replicas reaches this."""


@dataclass(frozen=True)
class Stopping:
    """When a probe's training stops (see the module docstring); steps come in ``chunk``s."""

    chunk: int = 25
    near_best: float = 0.03
    plateau: float = 0.01
    grow: float = 1.5  # the rate's factor after a chunk that lowered the monitor loss
    anneals: int = 3  # plateaus that divide the rate before one stops the replica
    anneal_factor: float = 4.0
    reached: float = 0.5  # stop a replica whose monitor loss is below this x target x uniform
    max_steps: int = 3000
    monitor: int = 512  # sequences of the fixed monitor draw

    def __post_init__(self) -> None:
        int_at_least("chunk", self.chunk, 1)
        positive_finite("near_best", self.near_best)
        positive_finite("plateau", self.plateau)
        require(0 < self.reached < 1, f"reached must be in (0, 1), got {self.reached!r}")
        require(self.grow >= 1, f"grow must be >= 1, got {self.grow!r}")
        int_at_least("anneals", self.anneals, 0)
        require(self.anneal_factor > 1, f"anneal_factor must be > 1, got {self.anneal_factor!r}")
        int_at_least("max_steps", self.max_steps, self.chunk)
        int_at_least("monitor", self.monitor, 2)


@dataclass
class BoldDriver:
    """Each replica's rate and stopping state under ``stop`` (module docstring): the rate
    ``lr`` and its growth factor ``grow`` (``E x 1 x 1``), the monitor loss at ``W = 0`` and
    after the last kept chunk (``E``), the losses ``reach`` and ``near`` at which ``reached``
    and ``near-best`` fire, and per replica its rule (``"cap"`` while it trains), steps and
    plateaus."""

    stop: Stopping
    lr: torch.Tensor
    initial: torch.Tensor
    reach: float
    near: float
    grow: torch.Tensor = field(init=False)
    previous: torch.Tensor = field(init=False)
    rules: list[str] = field(init=False)
    steps: list[int] = field(init=False)
    plateaus: list[int] = field(init=False)

    def __post_init__(self) -> None:
        E = len(self.initial)
        self.grow = torch.full((E, 1, 1), self.stop.grow, dtype=torch.float64)
        self.previous = self.initial
        self.rules, self.steps = ["cap"] * E, [self.stop.max_steps] * E
        self.plateaus = [0] * E

    @classmethod
    def of(
        cls,
        stop: Stopping,
        lr: float,
        initial: torch.Tensor,
        target: float,
        uniform: float,
        best: float,
    ) -> BoldDriver:
        """Before the first chunk: rate ``lr``, monitor loss ``initial``; ``reached`` at
        ``stop.reached x target x uniform``, ``near-best`` within ``stop.near_best`` of ``best``."""
        rate = torch.full((len(initial), 1, 1), lr, dtype=torch.float64)
        return cls(
            stop, rate, initial, stop.reached * target * uniform, (1 + stop.near_best) * best
        )

    def going(self, step: int) -> bool:
        """Whether training goes on after ``step`` steps."""
        return step < self.stop.max_steps and "cap" in self.rules

    def running(self) -> torch.Tensor:
        """``E x 1 x 1``: 1 for a replica still training, else 0."""
        return torch.tensor([r == "cap" for r in self.rules])[:, None, None]

    def judge(
        self, W: torch.Tensor, start: torch.Tensor, current: torch.Tensor, step: int
    ) -> torch.Tensor:
        """After a chunk from ``start`` to ``W`` ending at ``step`` with monitor loss ``current``
        (``E``): ``W`` with every chunk that made the monitor loss worse undone at half the rate
        (the others grow it), and each running replica's rule, steps and annealing updated."""
        stop, previous = self.stop, self.previous
        worse = ~torch.isfinite(current) | (current > previous)
        W = torch.where(worse[:, None, None], start, W)
        self.lr = torch.where(worse[:, None, None], self.lr / 2, self.lr * self.grow)
        current = torch.where(worse, previous, current)
        gain = torch.where(worse, math.inf, previous - current)
        flat = gain < stop.plateau * torch.minimum(current, self.initial - current)
        rules, steps, plateaus = self.rules, self.steps, self.plateaus
        for e in (e for e in range(len(rules)) if rules[e] == "cap"):
            if current[e] <= self.reach:
                rules[e], steps[e] = "reached", step
            elif current[e] <= self.near:
                rules[e], steps[e] = "near-best", step
            elif flat[e] and plateaus[e] < stop.anneals:
                plateaus[e] += 1
                self.lr[e] /= stop.anneal_factor
                self.grow[e] = 1.0
            elif flat[e]:
                rules[e], steps[e] = "plateau", step
        self.previous = current
        return W


@dataclass(frozen=True)
class Training:
    """One probe's training and evaluation settings (SPEC B3 defaults, position block)."""

    batch: int = 128
    lr_per_dim: float = 8 * POSITION_LR_PER_DIM  # per-coordinate loss: train.selection's at d = 8
    eval_size: int = 2048
    kind: str = "sphere"
    stopping: Stopping = Stopping()

    def __post_init__(self) -> None:
        int_at_least("batch", self.batch, 1)
        positive_finite("lr_per_dim", self.lr_per_dim)
        int_at_least("eval_size", self.eval_size, 2)
        one_of("pe kind", self.kind, PE_KINDS)


def draw(
    T: int, q: int, m_p: int, batch: int, seed: int, replicas: int, key: tuple, kind: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(on_y, t)``: the encodings of the subset ``E x B x q x m_p`` and the off-subset
    coordinates ``E x B x (T − q)`` (the ``ratio`` recipe of ``exact.products.draw``)."""

    def one(e: int) -> products.Draw:
        rng = np.random.default_rng(stream_seed(seed, e, "select-threshold", T, q, m_p, kind, *key))
        return products.draw(rng, batch, T, q, m_p, kind, "ratio")

    stacked = products.stack([one(e) for e in range(replicas)])
    return torch.from_numpy(stacked.on_y), torch.from_numpy(stacked.t)


def product_losses(W: torch.Tensor, on_y: torch.Tensor, t: torch.Tensor, d: int) -> torch.Tensor:
    """Per-sequence ``d Σ_i (s_i − 1{i∈y}/q)²`` (``E x B``, SPEC B3) with logits ``p_i · W u_y``
    on the subset and ``‖W u_y‖ t_i`` off it; ``W`` is the position block ``E x m_p x m_p``."""
    v = torch.einsum("eij,ebj->ebi", W, on_y.sum(dim=-2))
    return products.selection_loss(
        torch.cat(products.products(on_y, t, v), dim=-1), on_y.shape[-2], d
    )


@dataclass(frozen=True)
class Converged:
    """A probe's outcome per replica: final loss / uniform on the eval draw (± s.e.), the steps
    used, the rule that stopped training and the family's best loss / uniform."""

    ratios: list[float]
    stderrs: list[float]
    steps: list[int]
    rules: list[str]
    family_ratio: float


def converge(
    T: int,
    q: int,
    m_p: int,
    d: int,
    replicas: int,
    seed: int,
    training: Training = Training(),
    target: float = TARGET,
) -> Converged:
    """Train ``replicas`` position blocks until the stopping rule fires (module docstring)."""
    require(q < T, f"q must be < T (the uniform loss is 0 at q = T), got q={q}, T={T}")
    stop, kind = training.stopping, training.kind
    uniform = float(uniform_attention_loss(T, q, d))
    best = best_family_loss(T, q, m_p, d, kind, seed=seed).loss

    def sample(key: tuple, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        return draw(T, q, m_p, size, seed, replicas, key, kind)

    def mean_loss(data: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        with torch.no_grad():
            return product_losses(W, *data, d).mean(dim=-1)

    W = torch.zeros(replicas, m_p, m_p, dtype=torch.float64)
    monitor = sample(("monitor",), stop.monitor)
    driver = BoldDriver.of(
        stop, training.lr_per_dim * m_p, mean_loss(monitor), target, uniform, best
    )
    step = 0
    while driver.going(step):
        running, start = driver.running(), W.clone()
        for _ in range(stop.chunk):
            W.requires_grad_(True)
            loss = product_losses(W, *sample(("train", step), training.batch), 1).mean(dim=-1)
            (grad,) = torch.autograd.grad(loss.sum(), W)  # of the loss per coordinate
            W = (W - running * driver.lr * grad).detach()
            step += 1
        W = driver.judge(W, start, mean_loss(monitor), step)
    with torch.no_grad():
        final = product_losses(W, *sample(("eval",), training.eval_size), d)
    means, stderrs = final.mean(dim=-1), final.std(dim=-1) / math.sqrt(training.eval_size)
    return Converged(
        ratios=(means / uniform).tolist(),
        stderrs=(stderrs / uniform).tolist(),
        steps=driver.steps,
        rules=driver.rules,
        family_ratio=best / uniform,
    )


def family_threshold(
    T: int, q: int, target: float = TARGET, m_limit: int = 4096, kind: str = "sphere", seed: int = 0
) -> int | None:
    """``m_p^fam``: the smallest width whose ``W = αI`` family reaches ``target`` x uniform
    (``exact.family.best_family_loss``; the ratio does not depend on ``d``)."""

    def evaluate(m_p: int) -> list[bool]:
        best = best_family_loss(T, q, m_p, 1, kind, seed=seed)
        return [best.loss <= target * best.uniform]

    return smallest_passing(evaluate, 1.0, 2, m_limit)[0]


def population_threshold(
    T: int,
    q: int,
    d: int,
    replicas: int,
    seed: int = 0,
    samples: int = 1024,
    target: float = TARGET,
    m_limit: int = 4096,
    kind: str = "sphere",
    by_law: bool = False,
) -> dict:
    """``m_p*`` of population gradient descent from ``W = 0`` on the position block.

    The law of the encodings is invariant under rotations, so the population gradient at
    ``W = αI`` commutes with every rotation and is itself a multiple of ``I`` (tested): gradient
    descent from 0 moves along ``W = α(t) I`` only and comes to rest at the first minimum of
    the family's loss in ``α`` (``best_family_loss(descent=True)``). Each replica is an
    independent Monte Carlo estimate of that loss (``samples`` sequences to fit ``α``, as many
    to evaluate it; stream ``(seed, e, "population-threshold")``); it succeeds at ``m_p`` when
    its loss is ``<= target x`` uniform. Bisection as :func:`trained_threshold`. With ``by_law``
    (``sphere`` only) each loss comes from ``exact.family_law.best_law_loss``, whose cost does
    not grow with ``T``; the record then says ``"evaluator": "law"``."""
    require(not by_law or kind == "sphere", f"by_law needs sphere encodings, got {kind!r}")
    runs: dict[int, list] = {}

    def best(m_p: int, stream: int) -> FamilyBest:
        if by_law:
            return best_law_loss(T, q, m_p, d, samples, stream, True)
        return best_family_loss(T, q, m_p, d, kind, samples, stream, True)

    def evaluate(m_p: int) -> list[bool]:
        if m_p not in runs:
            runs[m_p] = [
                best(m_p, stream_seed(seed, e, "population-threshold")) for e in range(replicas)
            ]
        return [b.loss <= target * b.uniform for b in runs[m_p]]

    m_star, probes = smallest_passing(evaluate, RATE, 2, m_limit)
    return {
        "T": T,
        "q": q,
        "d": d,
        "m_star": m_star,
        "target": target,
        "replicas": replicas,
        "solver": "population",
        "samples": samples,
        **({"evaluator": "law"} if by_law else {}),
        "probes": [
            {
                **p.as_record(),
                "ratios": [b.loss / b.uniform for b in runs[p.size]],
                "stderrs": [b.stderr / b.uniform for b in runs[p.size]],
                "alphas": [b.alpha for b in runs[p.size]],
            }
            for p in probes
        ],
    }


def search_from_family(
    converged: Callable[[int], Any], target: float, start: int, m_limit: int
) -> tuple[int | None, list[tuple[Probe, Any]]]:
    """``m_p*`` by ``search.smallest_passing`` from ``start`` (half the family's threshold: a
    trained selector is not expected below it, so the cheap small widths are skipped), repeated
    from 2 should that start pass, reusing every probe; ``converged(m_p)`` trains one width and
    returns a run with per-replica loss ``ratios``. Also every probe with its run, by width."""
    runs: dict[int, Any] = {}

    def evaluate(m_p: int) -> list[bool]:
        if m_p not in runs:
            runs[m_p] = converged(m_p)
        return [r <= target for r in runs[m_p].ratios]

    m_star, _ = smallest_passing(evaluate, RATE, start, m_limit)
    if m_star == start and start > 2:
        m_star, _ = smallest_passing(evaluate, RATE, 2, start)
    return m_star, [
        (Probe(m, tuple(r <= target for r in runs[m].ratios)), runs[m]) for m in sorted(runs)
    ]


def trained_threshold(
    T: int,
    q: int,
    d: int,
    replicas: int,
    seed: int = 0,
    training: Training = Training(),
    target: float = TARGET,
    m_limit: int = 2048,
) -> dict:
    """``m_p*``: the smallest width whose converged selectors reach ``target`` x uniform in a
    ``RATE`` share of the replicas (:func:`search_from_family`: doubling, then bisection to a
    step of 1, from half the family's threshold ``m_p^fam``). Each probe record keeps every
    replica's outcome and ratio, the steps used and the stopping rule, so the bootstrap
    (``stats.threshold_draws``) needs no recomputation."""
    family = family_threshold(T, q, target, m_limit, training.kind, seed)
    m_star, probes = search_from_family(
        lambda m_p: converge(T, q, m_p, d, replicas, seed, training, target),
        target,
        max(2, (family or m_limit) // 2),
        m_limit,
    )
    return {
        "T": T,
        "q": q,
        "d": d,
        "m_star": m_star,
        "family_m": family,
        "target": target,
        "replicas": replicas,
        "training": asdict(training),
        "probes": [{**p.as_record(), **asdict(run)} for p, run in probes],
    }


# --- the growth law of m_p*(T): the analysis shared by B5.2 and C (SPEC Part D, E) ---------

GRID = "integer"
"""``m_p`` is an integer knob: a law's prediction is compared with the measured interval widened
by ``± 1`` (``stats.widen``, SPEC Part E)."""
MIN_SIZES = 4
"""The held-out test fits ``a + b (ln T)^p`` (3 parameters) on at least 3 sizes and predicts at
least one more."""


def _rows_exponents(
    law: stats.Law | stats.AffinePolylog, xs: list[float], rows: np.ndarray
) -> np.ndarray:
    """``law.exponent(law.fit(xs, row))`` for every row of ``rows`` (``resamples x sizes``) at
    once: the least squares of ``stats.Law.fit`` / ``stats.AFFINE_POLYLOG.fit`` (unconstrained)
    vectorized over the distinct rows (tested equal); a row with a non-finite value gives
    ``nan``."""
    y, back = np.unique(np.asarray(rows, dtype=float), axis=0, return_inverse=True)
    finite = np.isfinite(y).all(axis=1)
    y = np.where(finite[:, None], y, 1.0)
    x = np.asarray(xs, dtype=float)
    if isinstance(law, stats.AffinePolylog):
        v = np.log(x)[None, :] ** stats.P_GRID[:, None]  # powers x sizes
        vc = v - v.mean(axis=1, keepdims=True)
        yc = y - y.mean(axis=1, keepdims=True)  # rows x sizes
        b = (yc @ vc.T) / np.sum(vc**2, axis=1)  # rows x powers
        sse = np.sum((yc[:, None, :] - b[:, :, None] * vc[None, :, :]) ** 2, axis=2)
        exponents = stats.P_GRID[np.argmin(sse, axis=1)].astype(float)
    else:
        v, u = law.x_form(x), law.y_form(y)
        vc = v - v.mean()
        exponents = ((u - u.mean(axis=1, keepdims=True)) @ vc) / np.sum(vc**2)
    return np.where(finite, exponents, math.nan)[np.ravel(back)]


def _intervals(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``stats.interval`` of every column of ``columns`` (``resamples x k``) at once."""
    v = np.where(np.isnan(columns), np.inf, columns)
    tail = (1 - stats.LEVEL) / 2
    low = np.quantile(v, tail, axis=0, method="lower")
    return low, np.quantile(v, 1 - tail, axis=0, method="higher")


def separating_T(
    Ts: list[float],
    m: list[float],
    lows: list[float],
    highs: list[float],
    rival_min_alpha: float | None = RIVAL_MIN_ALPHA,
) -> int | None:
    """The smallest ``T = 2^k`` beyond the largest measured one at which ``a + b (ln T)^p`` and
    the rival ``c T^alpha`` (``alpha >= rival_min_alpha``), both fitted on all sizes, differ by
    more than the interval measured at the largest ``T`` widened by the integer grid (relative
    to its value); ``None`` with fewer than 3 sizes, an unreached size, or beyond ``2^40``."""
    if len(Ts) < 3 or not np.isfinite(m + highs).all() or m[-1] <= 0:
        return None
    width = (highs[-1] - lows[-1] + 2.0) / m[-1]  # widened by ± 1 (GRID)
    paper = stats.AFFINE_POLYLOG.fit(Ts, m)
    rival = POWER.fit(Ts, m, rival_min_alpha)
    for k in range(int(math.log2(max(Ts))) + 1, 41):
        p = stats.AFFINE_POLYLOG.predict(paper, [2.0**k])[0]
        r = POWER.predict(rival, [2.0**k])[0]
        if abs(p - r) > width * max(min(abs(p), abs(r)), 1e-12):
            return 2**k
    return None


def law_series(
    records: list[dict], offset: int = 0, rival_min_alpha: float | None = RIVAL_MIN_ALPHA
) -> dict[str, Any]:
    """One series of thresholds (records of ``population_threshold`` or ``trained_threshold``
    at several ``T``) plus ``offset`` (C: the width ``d + m_p*``), SPEC Part E.

    Per ``T`` the point and its bootstrap 95% interval over replicas. Fitted on all sizes, each
    with a bootstrap interval: ``p`` of the paper's ``a + b (ln T)^p`` (``polylog``: its
    ``(a, b, p)``), the exponent ``alpha`` of ``c T^alpha`` (free) and the slope ``b`` of
    ``a + b ln T`` (a description). ``comparison``: ``stats.compare_laws`` of ``a + b (ln T)^p``
    against ``c T^alpha`` with ``alpha >= rival_min_alpha``, both fitted on the smaller half,
    each prediction with its band from the bootstrap ``draws`` refitted (``stats.held_out``),
    judged against the intervals widened by ``± 1`` (``GRID``); ``None`` with fewer than
    ``MIN_SIZES`` sizes. ``flat``: one constant lies inside every widened interval (no growth to
    judge). ``separating_T``: where the two laws fitted on all sizes part."""
    rows = sorted(records, key=lambda r: r["T"])
    Ts = [float(r["T"]) for r in rows]
    points, draws = [], []
    for r in rows:
        sizes, outcomes = probe_matrix(r["probes"])
        point, boot = stats.threshold_draws(sizes, outcomes, RATE, seed=r["T"])
        points.append(point)
        draws.append(boot + offset)
    matrix = np.column_stack(draws)
    lows, highs = (x.tolist() for x in _intervals(matrix))
    m = [p + offset for p in points]
    highs = [math.inf if math.isinf(p) else h for p, h in zip(points, highs, strict=True)]
    out: dict[str, Any] = {"T": Ts, "m": m, "low": lows, "high": highs}
    out["rival_min_alpha"] = rival_min_alpha
    nan3 = (math.nan, math.nan, math.nan)
    out["b"] = out["alpha"] = out["p"] = out["polylog"] = nan3
    laws: list[tuple[str, stats.Law | stats.AffinePolylog]] = [
        ("b", LINEAR_LOG),
        ("alpha", POWER),
        ("p", stats.AFFINE_POLYLOG),
    ]
    laws = [(name, law) for name, law in laws if len(Ts) >= stats.parameters(law)]
    if laws:
        fitted = np.column_stack([_rows_exponents(law, Ts, matrix) for _, law in laws])
        for (name, law), low, high in zip(laws, *_intervals(fitted), strict=True):
            params = law.fit(Ts, m)
            out[name] = (law.exponent(params), float(low), float(high))
            if name == "p":
                out["polylog"] = params
    out["comparison"] = (
        stats.compare_laws(
            stats.AFFINE_POLYLOG, POWER, Ts, m, lows, highs, rival_min_alpha, GRID, matrix
        )
        if len(Ts) >= MIN_SIZES
        else None
    )
    low, high = stats.widen(lows, highs, GRID)
    out["flat"] = bool(np.isfinite(high).all() and low.max() <= high.min())
    out["separating_T"] = separating_T(Ts, m, lows, highs, rival_min_alpha)
    return out


def predictions(fit: dict[str, Any]) -> str:
    """``[p1 (band), ...] (meets|misses the intervals ± 1)`` of one law's held-out predictions,
    each with the 95% band of its refits (``stats.held_out``)."""

    def one(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3g}"

    bands = fit.get("band") or [[p, p] for p in fit["predicted"]]
    shown = ", ".join(
        f"{one(p)} ({one(lo)}–{one(hi)})"
        for p, (lo, hi) in zip(fit["predicted"], bands, strict=True)
    )
    return f"[{shown}] ({'meets' if fit['inside'] else 'misses'} the intervals ± 1)"
