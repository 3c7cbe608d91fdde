"""How much memory a run holds, and how one step batches its replicas: plain functions of a
config (SPEC A5, A6, B3, A7.6, B5.4).

Without torch or numpy, so that the API's memory guard (``core.resources.check_resources``) and
an experiment's peak price a run before anything is loaded or computed. Each peak is about the
most numbers the run holds at once, in bytes.
"""

from __future__ import annotations

from ..configs import (
    FCNConfig,
    OneStepConfig,
    SelectionTrainConfig,
    V1Config,
    XorTrainConfig,
)

BATCH_ELEMENTS = 1 << 25
"""Most numbers of ``V`` held at once by one step (``one_step``): a larger ``replica_batch`` is
split into batches of ``batch x d x m`` under it; a replica alone above it is streamed."""

CHUNK_NUMBERS = 1 << 22
"""Numbers of ``V`` a streamed step holds at once (``embeddings.CHUNK_ELEMENTS``)."""

KEPT_STREAM_ELEMENTS = 1 << 27
"""A streamed batch of ``batch x d x m`` at most this many numbers keeps its chunks between the
step's three products (scores, back-projection, scores after the step): ``V`` drawn once, not
three times, for 1 GiB (float64) at most. The products, chunk by chunk, are those of the stream."""

AUTO_BATCH_ELEMENTS = 1 << 23
"""Auto replica batch: ``batch x d x m`` under this many numbers. On the CPU smaller batches
are faster than ``BATCH_ELEMENTS`` (measured, 256 replicas at ``d = 10^4, m = 32``: 0.90 s with
26 per batch, 1.11 s with 104): less fresh memory to fault in."""


# ------------------------------------------------------------------------ one step (A5)


def one_step_batch(config: OneStepConfig) -> int:
    """Replicas per batch: ``batch x d x m`` under ``AUTO_BATCH_ELEMENTS`` unless
    ``replica_batch`` says otherwise, and always under ``BATCH_ELEMENTS``."""
    size = config.d * config.m
    auto = max(1, AUTO_BATCH_ELEMENTS // size)
    return min(config.seeds, config.replica_batch or auto, max(1, BATCH_ELEMENTS // size))


def one_step_streamed(config: OneStepConfig, keep_embeddings: bool = False) -> bool:
    """Whether ``V`` is streamed: one replica's ``d x m`` exceeds ``BATCH_ELEMENTS``."""
    return not keep_embeddings and config.d * config.m > BATCH_ELEMENTS


def one_step_stream_kept(config: OneStepConfig) -> bool:
    """Whether a streamed ``V`` keeps its chunks between products (``KEPT_STREAM_ELEMENTS``)."""
    size = one_step_batch(config) * config.d * config.m
    return one_step_streamed(config) and size <= KEPT_STREAM_ELEMENTS


def one_step_peak(config: OneStepConfig, keep_embeddings: bool = False) -> float:
    """About the most memory the step holds at once (``train.one_step``): a batch's ``V``
    and its cast (a stream's chunk), a dozen score-sized ``E x H x d`` arrays, an
    empirical step's block of inputs, the kept embeddings and the per-replica results."""
    batch, d, m = one_step_batch(config), config.d, config.m
    held = 2 * batch * d * m
    if one_step_streamed(config, keep_embeddings):
        held = CHUNK_NUMBERS + (batch * d * m if one_step_stream_kept(config) else 0)
    kept = 2 * config.seeds * d * m if keep_embeddings else 0
    inputs = 0 if config.samples is None else 2 * batch * min(config.samples * d, 1 << 22)
    numbers = held + kept + 12 * batch * config.k * d + inputs + 4 * config.seeds * config.k * m
    return 8.0 * numbers


# ------------------------------------------------------------------------ training (A6)


def xor_train_peak(config: XorTrainConfig) -> float:
    """About the least memory training holds (``train.xor_train``; a lower bound, so that
    only a run that cannot fit is refused): the embeddings ``V``, a few score-sized
    ``E x k x d`` arrays, the data (training set or a step's samples, a cube split's test
    side) and the trajectories, ``E x (steps + 1) x (k^2 + 4)`` numbers."""
    rows = config.samples or 0
    if config.cube_fraction is not None:
        rows = 2**config.d  # both sides of the split
    numbers = config.seeds * config.d * (config.m + 4 * config.k + 2 * rows)
    return 8.0 * (numbers + config.seeds * (config.steps + 1) * (config.k**2 + 4))


def v1_peak(config: V1Config) -> float:
    """About the least memory training holds (``train.kparity_v1``): every replica's split
    of the cube (inputs and bits, ``E x 2^n x n`` each), a forward pass's ``E x 2^n x k``
    and the trajectories, ``E x (epochs + 1) x (2k + 2)`` numbers."""
    cube = config.seeds * 2**config.n * (2 * config.n + config.k)
    return 8.0 * (cube + config.seeds * (config.epochs + 1) * (2 * config.k + 2))


# ------------------------------------------------------------------------ token selection (B3)


def selection_peak(config: SelectionTrainConfig) -> float:
    """About the most memory training holds: ``W`` with its gradient and mask, and a
    step's tokens and encodings with the autograd graph over them (float64)."""
    size = config.d + config.pe_dim
    curve = config.steps  # the loss of every step and replica
    return 8.0 * config.seeds * (4 * size**2 + 6 * config.batch * config.T * size + curve)


def selection_evaluation_peak(config: SelectionTrainConfig, lengths: list[int], size: int) -> float:
    """About the memory of the evaluation at the longest of ``lengths`` on ``size``
    sequences (``metrics.selection``): every replica's tokens and logits, the encodings,
    and a fixed PE's table."""
    longest = max(lengths)
    numbers = size * longest * (config.seeds * (config.d + 2) + 2 * config.pe_dim)
    return 8.0 * (numbers + longest * config.pe_dim)


# ------------------------------------------------------------------------ FCN baselines


def fcn_peak(config: FCNConfig) -> float:
    """About the most memory training holds: every replica's weights with their gradient
    and optimizer state, a batch's activations, the evaluation inputs and a fixed training
    set (``samples``)."""
    inputs, width, depth = config.inputs, config.width, config.depth
    weights = inputs * width + (depth - 1) * width**2 + width
    activations = config.batch * (inputs + 3 * width * depth)
    evaluation = inputs * config.evaluation_rows
    fixed_set = (config.samples or 0) * (inputs + 1)
    numbers = config.seeds * (4 * weights + activations + evaluation + fixed_set)
    return (8.0 if config.dtype == "float64" else 4.0) * numbers
