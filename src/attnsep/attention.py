"""Attention maps ``sigma``: scores ``s = V theta`` (last axis, length ``d``) to weights (SPEC A2).

Each map is one function registered by name, with its :class:`Properties` where declared: the
traits A7.3b asks which of decide learning (SPEC Part E). ``softmax`` is the exact map of the
papers, ``linear`` and ``erf`` the component-wise substitutes they compare against; the others
(SPEC Part D, A7.3 and A7.3b) pull softmax's traits apart: normalized or not, shift-invariant or
not, light, heavy or zero tails, and softmax at other temperatures. Every map is computed stably
(no overflow, no ``0 / 0``, finite gradients at large scores) and differentiable by autograd.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F

from .configs import ATTENTION_MAPS
from .core.validate import one_of

AttentionMap = Callable[[torch.Tensor], torch.Tensor]
Tails = Literal["zero", "light", "heavy"]


@dataclass(frozen=True)
class Properties:
    """What A7.3b tests of a map (SPEC Part E), declared once where the map is registered.

    ``normalized``: the weights are ``>= 0`` and sum to one. ``shift_invariant``: adding one
    constant to every score leaves the weights unchanged. ``tails``: what the weight of one score
    does as that score falls far below the others (the others fixed): ``"zero"`` it is exactly 0
    beyond a finite gap (a sparse map), ``"light"`` it vanishes at least exponentially fast and is
    never 0, ``"heavy"`` it vanishes only polynomially or not at all. ``temperature``: the map is
    ``base`` applied to ``scores / temperature`` (1 and ``None``: the map at its own scale);
    since ``theta`` is trained, a temperature ``T`` is ``base`` from an initialization of norm
    ``1 / T`` at step size ``eta / T^2``.
    """

    normalized: bool
    shift_invariant: bool
    tails: Tails
    temperature: float = 1.0
    base: str | None = None


ATTENTION: dict[str, AttentionMap] = {}
PROPERTIES: dict[str, Properties] = {}


def register(
    name: str, properties: Properties | None = None
) -> Callable[[AttentionMap], AttentionMap]:
    """Decorator adding an attention map to the registry under ``name``, with its properties
    if declared; from then on every config, API function and experiment accepts
    ``attention=name``. A map without properties runs everywhere; A7.3b's property study
    leaves it out (and says so)."""

    def add(fn: AttentionMap) -> AttentionMap:
        ATTENTION[name] = fn
        PROPERTIES.pop(name, None)
        if properties is not None:
            PROPERTIES[name] = properties
        if name not in ATTENTION_MAPS:
            ATTENTION_MAPS.append(name)
        return fn

    return add


def unregister(name: str) -> None:
    """Remove the map registered as ``name`` (e.g. one a notebook registered for a try)."""
    one_of("attention", name, sorted(ATTENTION))
    del ATTENTION[name]
    PROPERTIES.pop(name, None)
    ATTENTION_MAPS.remove(name)


def get(name: str) -> AttentionMap:
    """The attention map registered as ``name``."""
    return ATTENTION[one_of("attention", name, sorted(ATTENTION))]


def properties(name: str) -> Properties | None:
    """The properties declared with the map registered as ``name`` (``None``: none declared)."""
    return PROPERTIES.get(one_of("attention", name, sorted(ATTENTION)))


def shifted(scores: torch.Tensor) -> torch.Tensor:
    """``s - max_j s_j``: every score ``<= 0``, the top one 0."""
    return scores - scores.max(dim=-1, keepdim=True).values


# --- the papers' maps -------------------------------------------------------------------------


@register("softmax", Properties(normalized=True, shift_invariant=True, tails="light"))
def softmax(scores: torch.Tensor) -> torch.Tensor:
    """``exp(s_i) / sum_j exp(s_j)``, computed stably (max subtracted)."""
    return torch.softmax(scores, dim=-1)


@register("linear", Properties(normalized=False, shift_invariant=False, tails="heavy"))
def linear(scores: torch.Tensor) -> torch.Tensor:
    """``s_i / d`` (SPEC A2 choice)."""
    return scores / scores.shape[-1]


@register("erf", Properties(normalized=False, shift_invariant=False, tails="heavy"))
def erf(scores: torch.Tensor) -> torch.Tensor:
    """``erf(s_i) / d`` (SPEC A2 choice); a falling score's weight tends to ``-1 / d``."""
    return torch.erf(scores) / scores.shape[-1]


# --- component-wise and normalized substitutes (SPEC Part D, A7.3b) ---------------------------


@register("sigmoid", Properties(normalized=False, shift_invariant=False, tails="light"))
def sigmoid(scores: torch.Tensor) -> torch.Tensor:
    """``sigmoid(s_i) / d``: a bounded component-wise map, not normalized across positions."""
    return torch.sigmoid(scores) / scores.shape[-1]


@register("normalized-erf", Properties(normalized=True, shift_invariant=False, tails="light"))
def normalized_erf(scores: torch.Tensor) -> torch.Tensor:
    """``(1 + erf(s_i)) / sum_j (1 + erf(s_j))`` (SPEC D, A7.3): normalized like softmax, with
    bounded tails. Since ``1 + erf(s) = 2 Phi(sqrt(2) s)``, it is the softmax of
    ``log Phi(sqrt(2) s)``, which stays finite where ``1 + erf(s)`` underflows to 0."""
    return torch.softmax(torch.special.log_ndtr(scores * 2**0.5), dim=-1)


@register("shifted-erf", Properties(normalized=True, shift_invariant=True, tails="light"))
def shifted_erf(scores: torch.Tensor) -> torch.Tensor:
    """``(1 + erf(s_i − max s)) / sum_j (1 + erf(s_j − max s))``: the normalized erf made
    shift-invariant like softmax. ``normalized-erf`` cannot put more than about ``2/d`` on one
    position when ``s = V theta`` (about half the scores are positive, and ``1 + erf`` saturates at
    2); this one can represent ``e_i``, so A7.3 is not decided by expressivity alone."""
    return normalized_erf(shifted(scores))


@register("normalized-sigmoid", Properties(normalized=True, shift_invariant=False, tails="light"))
def normalized_sigmoid(scores: torch.Tensor) -> torch.Tensor:
    """``sigmoid(s_i) / sum_j sigmoid(s_j)`` (A7.3b): like ``normalized-erf``, a bounded weight
    normalized, with exponential instead of Gaussian tails; the softmax of ``log sigmoid(s)``."""
    return torch.softmax(F.logsigmoid(scores), dim=-1)


LOG_SOFTPLUS_SWITCH = -20.0
"""Below this score ``log softplus(s) = s - e^s / 2`` to float64 precision (the next term is
``e^{2s} / 24``); above it the direct form is exact and ``softplus(s) > 0``."""


def softplus(scores: torch.Tensor) -> torch.Tensor:
    """``log(1 + e^s)`` to float64 precision at every score (``F.softplus`` returns ``s`` above
    20, off by ``e^-s``)."""
    return torch.logaddexp(scores, torch.zeros_like(scores))


def log_softplus(scores: torch.Tensor) -> torch.Tensor:
    """``log(log(1 + e^s))``, finite (with a finite gradient) for every finite score."""
    low = scores.clamp(max=LOG_SOFTPLUS_SWITCH)
    high = scores.clamp(min=LOG_SOFTPLUS_SWITCH)
    return torch.where(
        scores < LOG_SOFTPLUS_SWITCH, low - torch.exp(low) / 2, torch.log(softplus(high))
    )


@register("normalized-softplus", Properties(normalized=True, shift_invariant=False, tails="light"))
def normalized_softplus(scores: torch.Tensor) -> torch.Tensor:
    """``softplus(s_i) / sum_j softplus(s_j)`` (A7.3b): a normalized ReLU made smooth; the weight
    grows only linearly with the score, so at large scales it is ``relu(s) / sum relu(s)``,
    which cannot put the weight on one position when about half the scores are positive."""
    return torch.softmax(log_softplus(scores), dim=-1)


@register("floored-softmax", Properties(normalized=True, shift_invariant=False, tails="heavy"))
def floored_softmax(scores: torch.Tensor) -> torch.Tensor:
    """``(1 + e^{s_i}) / sum_j (1 + e^{s_j})`` (A7.3b): softmax's exponential growth with a
    floor, so a falling score keeps a weight (heavy tails) and adding a constant changes the
    weights; it can still represent ``e_i`` (the top's ``e^s`` swamps the floors). Since
    ``1 + e^s = exp(softplus(s))``, it is the softmax of ``softplus(s)``."""
    return torch.softmax(softplus(scores), dim=-1)


@register("shifted-exp", Properties(normalized=False, shift_invariant=True, tails="light"))
def shifted_exp(scores: torch.Tensor) -> torch.Tensor:
    """``exp(s_i - max s)`` (A7.3b): softmax's numerator alone, shift-invariant but not
    normalized (the weights sum to between 1 and ``d``); the top position always gets 1, so it
    represents ``e_i`` as the others fall."""
    return torch.exp(shifted(scores))


@register("shifted-cauchy", Properties(normalized=True, shift_invariant=True, tails="heavy"))
def shifted_cauchy(scores: torch.Tensor) -> torch.Tensor:
    """``w_i / sum_j w_j`` with ``w_i = 1 / (1 + (max s - s_i)^2)`` (A7.3b): normalized and
    shift-invariant like softmax, with polynomial (heavy) tails; it represents ``e_i`` only as
    the gaps grow past ``sqrt(d)``."""
    w = 1 / (1 + shifted(scores).square())
    return w / w.sum(dim=-1, keepdim=True)


# --- sparse maps (A7.3b): weights exactly 0 below a threshold ---------------------------------


def sorted_cumulants(z: torch.Tensor, powers: int) -> tuple[torch.Tensor, ...]:
    """``z`` sorted in decreasing order along the last axis, the ranks ``k = 1..d`` and the
    cumulative sums of its first ``powers`` powers (``cumsum(z^p)`` for ``p = 1..powers``)."""
    top = z.sort(dim=-1, descending=True).values
    k = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype, device=z.device)
    return top, k, *(top.pow(p).cumsum(dim=-1) for p in range(1, powers + 1))


def at_size(values: torch.Tensor, size: torch.Tensor) -> torch.Tensor:
    """``values[..., size - 1]`` with the last axis kept (``size``: ``... x 1``, at least 1)."""
    return values.gather(-1, size - 1)


@register("sparsemax", Properties(normalized=True, shift_invariant=True, tails="zero"))
def sparsemax(scores: torch.Tensor) -> torch.Tensor:
    """``(s_i - tau)_+`` with ``tau`` making the weights sum to one (Martins and Astudillo 2016):
    the Euclidean projection of ``s`` onto the simplex. With ``s`` sorted decreasingly, the
    support is the ``K`` largest, ``K`` the largest ``k`` with ``1 + k s_(k) > sum_{j <= k}
    s_(j)``, and ``tau = (sum_{j <= K} s_(j) - 1) / K``. ``K`` is found without gradient;
    autograd through ``tau`` then gives the map's Jacobian. Scores are shifted by their max
    first (the map is shift-invariant) so that the sums cannot overflow."""
    z = shifted(scores)
    top, k, cum = sorted_cumulants(z, 1)
    with torch.no_grad():
        size = (1 + k * top > cum).sum(dim=-1, keepdim=True)
    tau = (at_size(cum, size) - 1) / at_size(k.expand_as(cum), size)
    return (z - tau).clamp(min=0)


@register("entmax-1.5", Properties(normalized=True, shift_invariant=True, tails="zero"))
def entmax15(scores: torch.Tensor) -> torch.Tensor:
    """1.5-entmax (Peters, Niculae and Martins 2019): ``(z_i - tau)_+^2`` with ``z = s / 2`` and
    ``tau`` making the weights sum to one; between softmax (dense) and sparsemax. Exact sort
    form: for the ``k`` largest ``z``, ``tau_k = mean_k - sqrt((1 - k var_k) / k)`` (the root of
    ``sum_{j <= k} (z_(j) - tau)^2 = 1``), the support size ``K`` the largest ``k`` with
    ``tau_k <= z_(k)``. ``K`` is found without gradient and ``tau_K`` recomputed from the sums at
    ``K``, so autograd gives the Jacobian and never differentiates a square root at 0."""
    z = shifted(scores) / 2
    top, k, cum, cum_sq = sorted_cumulants(z, 2)
    with torch.no_grad():
        mean, var = cum / k, cum_sq / k - (cum / k).square()
        tau = mean - ((1 - k * var) / k).clamp(min=0).sqrt()
        size = (tau <= top).sum(dim=-1, keepdim=True)
    K = at_size(k.expand_as(cum), size)
    mean = at_size(cum, size) / K
    var = at_size(cum_sq, size) / K - mean.square()
    tau = mean - ((1 - K * var) / K).sqrt()
    return (z - tau).clamp(min=0).square()


# --- softmax at other temperatures (A7.3b) ---------------------------------------------------


def tempered(base: str, temperature: float) -> str:
    """Register ``base`` applied to ``scores / temperature`` as ``'{base}-t{temperature:g}'``, with
    ``base``'s properties (if declared); returns the name."""
    name = f"{base}-t{temperature:g}"
    fn = ATTENTION[base]

    def scaled(scores: torch.Tensor) -> torch.Tensor:
        return fn(scores / temperature)

    scaled.__doc__ = f"``{base}(s / {temperature:g})`` (A7.3b: a temperature of {base})."
    own = PROPERTIES.get(base)
    props = own and dataclasses.replace(own, temperature=temperature, base=base)
    register(name, props)(scaled)
    return name


SOFTMAX_TEMPERATURES = (0.03, 0.1, 10.0, 30.0)
"""The temperatures at which softmax is registered beside its own (``softmax-t0.1``, ...)."""
for _t in SOFTMAX_TEMPERATURES:
    tempered("softmax", _t)
