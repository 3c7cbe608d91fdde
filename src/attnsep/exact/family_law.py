"""The ``W = αI`` family's loss at large ``T`` from the law of the products (SPEC B3, B5.2).

:mod:`.family` draws all ``T − q`` products off the subset, ``O(T)`` per sequence. Here a
sequence costs ``O(q² + top)`` draws and ``O(NODES)`` arithmetic per ``α``, whatever ``T``.
``sphere`` encodings only. With ``W = αI`` and ``r = ‖u_y‖`` the loss of a sequence is

``L/d = Σ_{i∈y} (e^{a_i}/Z − 1/q)² + S_2 / Z²``, ``Z = Σ_{i∈y} e^{a_i} + S_1``,
``S_k = Σ_{i∉y} e^{k α r t_i}``,

with ``t_i = cos θ_i`` i.i.d. given the subset, ``θ`` of density ``∝ sin^{m−2} θ`` on
``[0, π]``. The off-subset positions enter through ``(S_1, S_2)`` only, and the sums are split
at a level ``τ_0 = cos θ_0`` fixed per ``(K = T − q, m_p)`` so that ``K P(t > τ_0) = top``:

* **exceedances**, exact in law: their number ``N ~ Binomial(K, P(t > τ_0))`` and their values,
  i.i.d. from the law above ``τ_0`` (the inverse of its distribution function, tabulated on
  ``TABLE`` points in ``θ``). They carry the heavy upper tail of ``e^{α r t}``;
* **the bulk**, ``K − N`` terms i.i.d. from the law below ``τ_0``, bounded by ``e^{α r τ_0}``:
  ``(S_1, S_2)`` drawn as the bivariate normal with their exact mean and covariance (the central
  limit, *choice*). Its moments ``E[e^{k α r t} | t ≤ τ_0]``, ``k = 1..4``, come from
  Gauss–Legendre quadrature in ``θ`` on a window around the integrand's mode (``NODES`` nodes,
  ``± HALF_WIDTH`` local scales), tabulated once per ``(τ_0, m_p)`` in ``ln(1 + c)`` and
  interpolated (:func:`table_log_moments`). The two normals of a sequence are drawn once, so
  the loss is smooth in ``α`` and the search over ``α`` sees common random numbers.

With ``K <= 4 top`` every off-subset product is drawn exactly (no bulk). The subset's own
products come from its Gram matrix, exact in law: the Gram of ``q`` Gaussian rows of ``R^m``
is Wishart, drawn by Bartlett's decomposition (``O(q²)``; direct rows when ``m < q``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from ..configs import FAMILY_SAMPLES as SAMPLES
from ..core.rng import stream_seed
from ..core.validate import int_at_least, require
from .family import FamilyBest, minimize_alpha
from .law_sizes import MIN_OCTAVE, MOMENT_STEP, NODES, TABLE, TOP
from .products import subset_loss

HALF_WIDTH = 12.0
_GL_X, _GL_W = np.polynomial.legendre.leggauss(NODES)


@dataclass(frozen=True)
class Tail:
    """The split of the off-subset law at ``θ_0``: ``p`` = P(θ < θ_0) = P(t > τ_0), the
    conditional distribution function of ``θ`` on ``[0, θ_0]`` (``theta``, ``cdf``) and
    ``log_bulk``, ``log ∫_{θ_0}^π sin^{m−2} θ dθ``."""

    theta0: float
    p: float
    theta: np.ndarray
    cdf: np.ndarray
    log_bulk: float


@lru_cache(maxsize=64)
def tail(K: int, m_p: int, top: int = TOP) -> Tail:
    """The split level for ``K`` off-subset products in ``R^{m_p}`` (``K P(t > τ_0) ≈ top``;
    cached: every replica and draw of a width shares it, read only)."""
    theta = np.linspace(0.0, math.pi, TABLE)
    density = np.sin(theta) ** (m_p - 2)
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (density[1:] + density[:-1]) * np.diff(theta))])
    i = int(np.searchsorted(cum, top / K * cum[-1]))
    first = max(int(np.searchsorted(cum, 0.0, side="right")) - 1, 0)
    return Tail(
        theta0=float(theta[i]),
        p=float(cum[i] / cum[-1]),
        theta=theta[first : i + 1],
        cdf=cum[first : i + 1] / cum[i],
        log_bulk=math.log(cum[-1] - cum[i]),
    )


def log_moments(c: np.ndarray, theta0: float, m_p: int) -> np.ndarray:
    """``log ∫_{θ_0}^π e^{c cos θ} sin^{m−2} θ dθ`` for each ``c >= 0`` (Gauss–Legendre on a
    window of ``± HALF_WIDTH`` local scales around the integrand's mode on ``[θ_0, π]``)."""
    c = np.asarray(c, dtype=float)
    beta = (m_p - 2) / 2
    root = beta + np.sqrt(beta * beta + c * c)
    x = np.divide(c, root, out=np.zeros_like(c), where=root > 0)
    mode = np.maximum(np.arccos(x), theta0)
    sin, cos = np.sin(mode), np.cos(mode)
    slope = np.abs(-c * sin + (m_p - 2) * cos / sin)
    curvature = np.maximum(c * cos + (m_p - 2) / sin**2, 0.0)
    scale = np.sqrt(curvature) + slope
    width = HALF_WIDTH * np.divide(1.0, scale, out=np.full_like(c, np.inf), where=scale > 0)
    lo, hi = np.maximum(theta0, mode - width), np.minimum(math.pi, mode + width)
    half = 0.5 * (hi - lo)
    nodes = (0.5 * (hi + lo))[..., None] + half[..., None] * _GL_X
    log_f = c[..., None] * np.cos(nodes) + (m_p - 2) * np.log(np.sin(nodes)) + np.log(_GL_W)
    top = log_f.max(axis=-1, keepdims=True)
    return np.log(half) + top[..., 0] + np.log(np.exp(log_f - top).sum(axis=-1))


@lru_cache(maxsize=256)
def moment_table(theta0: float, m_p: int, octave: int) -> np.ndarray:
    """:func:`log_moments` minus its asymptote ``c cos θ_0`` on the grid ``ln(1 + c) = k h``
    (``h = MOMENT_STEP``) for ``c`` up to ``2^octave`` and three points either side: a function
    of ``(θ_0, m_p)`` alone, so every ``α`` and replica of a width shares one table."""
    s = np.arange(-3, math.log1p(2.0**octave) / MOMENT_STEP + 4) * MOMENT_STEP
    c = np.expm1(s)
    return log_moments(c, theta0, m_p) - c * math.cos(theta0)


def table_log_moments(c: np.ndarray, theta0: float, m_p: int) -> np.ndarray:
    """:func:`log_moments` by four-point Lagrange interpolation in ``ln(1 + c)`` on
    :func:`moment_table` (``c >= 0``), about 20 times faster per call."""
    octave = max(MIN_OCTAVE, math.ceil(math.log2(max(float(np.max(c, initial=0.0)), 1.0))))
    G = moment_table(theta0, m_p, octave)
    x = np.log1p(c) / MOMENT_STEP + 3
    i = np.clip(np.floor(x).astype(int), 1, len(G) - 3)
    t = x - i
    value = (
        -t * (t - 1) * (t - 2) / 6 * G[i - 1]
        + (t + 1) * (t - 1) * (t - 2) / 2 * G[i]
        - (t + 1) * t * (t - 2) / 2 * G[i + 1]
        + (t + 1) * t * (t - 1) / 6 * G[i + 2]
    )
    return value + c * math.cos(theta0)


@dataclass(frozen=True)
class LawDraw:
    """One draw of ``samples`` sequences: the subset's products ``G_in`` (``S x q``), ``r =
    ‖u_y‖`` (``S``), the exactly drawn off-subset coordinates ``t`` (``S x N_max``, ``nan``
    padded), the bulk's size (``S``) and normals (``S x 2``), and the split (``None``: no bulk)."""

    G_in: np.ndarray
    r: np.ndarray
    t: np.ndarray
    bulk: np.ndarray
    normals: np.ndarray
    split: Tail | None
    m_p: int

    @cached_property
    def padding(self) -> np.ndarray | None:
        """Where ``t`` is padding (``None``: nowhere), found once for every ``α`` of a search."""
        missing = np.isnan(self.t)
        return missing if bool(missing.any()) else None

    @cached_property
    def t_max(self) -> np.ndarray:
        """Each sequence's largest drawn ``t`` (``−inf`` where none): ``max_i c t_i = c max_i t_i``
        for ``c >= 0``, the same number (rounding is monotone)."""
        return np.nanmax(self.t, axis=1, initial=-np.inf)


def _subset(q: int, m_p: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """``S x q x q`` Gram matrices of ``q`` uniform unit vectors of ``R^{m_p}``."""
    if m_p < q:
        rows = rng.standard_normal((samples, q, m_p))
        gram = rows @ rows.transpose(0, 2, 1)
    else:
        L = np.tril(rng.standard_normal((samples, q, q)), -1)
        df = m_p - np.arange(q)
        L[:, np.arange(q), np.arange(q)] = np.sqrt(2.0 * rng.standard_gamma(df / 2, (samples, q)))
        gram = L @ L.transpose(0, 2, 1)
    norm = np.sqrt(np.diagonal(gram, axis1=1, axis2=2))
    return gram / (norm[:, :, None] * norm[:, None, :])


def law_draw(
    T: int, q: int, m_p: int, samples: int, rng: np.random.Generator, top: int = TOP
) -> LawDraw:
    """``samples`` sequences' draws, exact in law up to the bulk's central limit."""
    int_at_least("T", T, 2)
    int_at_least("q", q, 1)
    require(q < T, f"q must be < T, got q={q} and T={T}")
    int_at_least("pe width", m_p, 2)
    int_at_least("top", top, 1)
    gram = _subset(q, m_p, samples, rng)
    G_in = gram.sum(axis=2)
    r = np.sqrt(np.maximum(G_in.sum(axis=1), 0.0))
    K = T - q
    if K <= 4 * top:
        half = (m_p - 1) / 2
        t = 2 * rng.beta(half, half, (samples, K)) - 1
        bulk, split = np.zeros(samples), None
    else:
        split = tail(K, m_p, top)
        n = rng.binomial(K, split.p, samples)
        u = rng.random((samples, max(int(n.max()), 1)))
        t = np.cos(np.interp(u, split.cdf, split.theta))
        t[np.arange(t.shape[1]) >= n[:, None]] = np.nan
        bulk = (K - n).astype(float)
    return LawDraw(G_in, r, t, bulk, rng.standard_normal((samples, 2)), split, m_p)


def law_losses(alpha: float, draw: LawDraw, d: int = 1) -> np.ndarray:
    """Per-sequence ``d Σ_i (s_i − 1{i∈y}/q)²`` at ``W = αI`` (module docstring). The search
    over ``α`` calls it some forty times per draw, so what depends on the draw alone is found
    once (:attr:`LawDraw.padding`, :attr:`LawDraw.t_max`) and the bulk's four moments are
    interpolated in one call; the numbers are those of the term-by-term form."""
    require(alpha >= 0, f"alpha must be >= 0, got {alpha}")
    c = alpha * draw.r
    a_in, a_out = alpha * draw.G_in, c[:, None] * draw.t
    with np.errstate(invalid="ignore"):  # 0 x (−inf) where a sequence has no drawn t
        top_out = np.where(np.isneginf(draw.t_max), -np.inf, c * draw.t_max)
    shift = np.maximum(a_in.max(axis=1), top_out)
    if draw.split is not None:
        shift = np.maximum(shift, c * math.cos(draw.split.theta0))
    e_in = np.exp(a_in - shift[:, None])
    e_out = np.exp(a_out - shift[:, None])
    if draw.padding is not None:
        e_out[draw.padding] = 0.0
    S1, S2 = e_out.sum(axis=1), (e_out**2).sum(axis=1)
    if draw.split is not None:
        n = draw.bulk
        k = np.arange(1, 5)[:, None]
        log_mu = table_log_moments(k * c, draw.split.theta0, draw.m_p)
        mu = np.exp(log_mu - k * shift - draw.split.log_bulk)
        v11 = np.maximum(mu[1] - mu[0] ** 2, 0.0)
        v12 = mu[2] - mu[0] * mu[1]
        v22 = np.maximum(mu[3] - mu[1] ** 2, 0.0)
        sd1 = np.sqrt(n * v11)
        load = np.divide(n * v12, sd1, out=np.zeros_like(sd1), where=sd1 > 0)
        rest = np.sqrt(np.maximum(n * v22 - load**2, 0.0))
        z1, z2 = draw.normals[:, 0], draw.normals[:, 1]
        S1 = S1 + np.maximum(n * mu[0] + sd1 * z1, 0.0)
        S2 = S2 + np.maximum(n * mu[1] + load * z1 + rest * z2, 0.0)
    Z = e_in.sum(axis=1) + S1
    return subset_loss(e_in / Z[:, None], S2 / Z**2, d)


def best_law_loss(
    T: int,
    q: int,
    m_p: int,
    d: int = 1,
    samples: int = SAMPLES,
    seed: int = 0,
    descent: bool = False,
    top: int = TOP,
) -> FamilyBest:
    """:func:`.family.best_family_loss` (``sphere``, same search over ``α``) on law draws:
    ``α`` fitted on one draw, the loss on another. Streams ``(seed, "family-law", T, q, m_p,
    top, part)``; cost independent of ``T`` (one table of ``TABLE`` points per call)."""
    int_at_least("d", d, 1)
    int_at_least("samples", samples, 2)

    def draw(part: str) -> LawDraw:
        rng = np.random.default_rng(stream_seed(seed, "family-law", T, q, m_p, top, part))
        return law_draw(T, q, m_p, samples, rng, top)

    fit = draw("fit")
    alpha = minimize_alpha(lambda a: float(law_losses(a, fit).mean()), descent)
    losses = law_losses(alpha, draw("eval"), d)
    return FamilyBest(
        alpha=alpha,
        loss=float(losses.mean()),
        stderr=float(losses.std(ddof=1) / math.sqrt(samples)),
        uniform=d * (T - q) / (q * T),
    )
