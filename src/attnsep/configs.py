"""The library's run configs: every default, limit and help text written once.

Frozen pydantic models with their limits as field constraints; they import neither torch nor
the modules that do, so the command line builds and checks a config before loading torch. The
training modules re-export them under their old homes (``one_step.OneStepConfig``, ...),
experiment configs take their defaults from them (:func:`inherit`, :func:`default`) and CLI
options their default and help (``cli.common.option``).

A bad value raises a one-line ``ValueError`` naming it and what is allowed (``d must be an
integer >= 2, got 1``), derived from the field's constraints; the CLI turns it into
``error: ...`` and exit code 2.
"""

from __future__ import annotations

import copy
import math
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .core.io import REPORT_FOLDER as REPORT_FOLDER  # re-exported: the defaults, once
from .core.io import STORE_PATH as STORE_PATH
from .core.parse import auto_or_positive as auto_or_positive  # re-exported: the CLI's parsers
from .core.parse import int_list as int_list
from .core.parse import parse_lengths as parse_lengths
from .core.parse import population_or_count as population_or_count
from .core.parse import seconds as seconds
from .core.validate import (
    Registered,
    distinct_indices,
    one_line,
    oversized,
    positive_finite,
    require,
    shown,
)
from .core.validate import allowed as allowed  # re-exported for the CLI (its help lists choices)

# ------------------------------------------------------------------------ shared limits

ATTENTION_MAPS: list[str] = [
    "entmax-1.5", "erf", "floored-softmax", "linear", "normalized-erf", "normalized-sigmoid",
    "normalized-softplus", "shifted-cauchy", "shifted-erf", "shifted-exp", "sigmoid", "softmax",
    "softmax-t0.03", "softmax-t0.1", "softmax-t10", "softmax-t30", "sparsemax",
]  # fmt: skip
"""The maps ``attention.ATTENTION`` registers, checkable without loading them; a map a user
registers (``attention.register``) joins this list, so every config accepts it."""
AttentionName = Annotated[str, AfterValidator(Registered("attention", ATTENTION_MAPS))]
Device = Literal["auto", "cpu", "cuda"]
DType = Literal["float64", "float32"]
Init = Literal["antisymmetric", "independent", "orthogonal"]
PEMode = Literal["stochastic", "fixed"]
PEKind = Literal["sphere", "gaussian"]
Trainable = Literal["full", "position"]

INITS: tuple[str, ...] = get_args(Init)
PE_KINDS: tuple[str, ...] = get_args(PEKind)
TRAINABLE: tuple[str, ...] = get_args(Trainable)

MAX_EXACT_HEADS = 4
"""Most heads the exact population loss handles (``2H = 8`` forms: 379 partitions; ``k = 5``
already costs seconds per replica)."""
MAX_CUBE_D = 20
"""Largest ``d`` whose whole cube ``{±1}^d`` is enumerated (train/test splits of the cube)."""
MAX_DATA_ELEMENTS = 1 << 27
"""Most numbers one training step's data may hold (``seeds x rows x d``, 1 GiB in float64)."""
EVAL_SIZE = 128
"""Sequences per evaluation length of a trained selector (``metrics.selection``)."""

Count = Annotated[int, Field(ge=1)]
Seed = Annotated[int, Field(ge=0, description="Base seed; replica e uses streams (seed, e, ...).")]


class ConfigBase(BaseModel):
    """Base of every config, the library's and the experiments' (``experiments.base``):
    frozen, no unknown fields, no NaN or infinity; a failure is one ``ValueError`` line naming
    the field, what it allows and the value given (``core.validate.one_line``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, defer_build=True)
    errors_by_key: ClassVar[bool] = False
    """Name a bad field by its key (as written in a file or ``--set``) rather than its title."""
    label: ClassVar[str] = ""
    """The config's name in its errors (an experiment's: ``experiments.base.register``):
    ``one-step: ...``, ``unknown field 'x' for one-step; allowed: ...``."""

    def __init__(self, **data: Any) -> None:
        self._fits_int64(data)  # before the validators compute with a value (2**d, ...)
        try:
            super().__init__(**data)
        except ValidationError as err:
            where = self.label or None
            line = one_line(type(self), err, data, by_key=self.errors_by_key, where=where)
            raise ValueError(line) from None
        self._fits_int64({key: getattr(self, key) for key in type(self).model_fields})

    @classmethod
    def _fits_int64(cls, data: dict[str, Any]) -> None:
        """Every integer in ``data`` (1e30 read as an integer too) within int64: what numpy,
        torch and SQLite hold; a larger one is one line, not an overflow deep in a run."""
        for key, value in data.items():
            if (huge := oversized(value)) is not None:
                info = cls.model_fields.get(key)
                label = key if cls.errors_by_key or info is None else info.title or key
                where = f"{cls.label}: " if cls.label else ""
                raise ValueError(f"{where}{label} must be below 2**63, got {shown(huge)}")


class LibraryConfig(ConfigBase):
    """Base of the library's configs, strict besides (``8.0`` is not an integer, ``"1"`` not a
    number): they come from Python. Experiment configs come from JSON and TOML files and
    command lines, so lists stand for tuples there (``ExperimentConfig``)."""

    model_config = ConfigDict(strict=True)  # merged with ConfigBase's

    def replace(self, **changes: Any) -> LibraryConfig:
        """A copy with ``changes`` applied, validated again (as ``dataclasses.replace``)."""
        return type(self)(**{**{k: getattr(self, k) for k in type(self).model_fields}, **changes})


def default(model: type[BaseModel], name: str) -> Any:
    """The default of ``model``'s field ``name``."""
    return model.model_fields[name].get_default(call_default_factory=True)


def inherit(model: type[BaseModel], name: str) -> Any:
    """``model``'s field ``name`` (default, limits, help) for another config:
    ``eta_scale: float = inherit(OneStepConfig, "eta_scale")``."""
    return copy.deepcopy(model.model_fields[name])


# ------------------------------------------------------------------------ sparse parity (A)


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

ETA_SCALE = 16.0
"""Default constant of the automatic step size of one step (``default_eta``)."""


def default_eta(d: int, scale: float = ETA_SCALE) -> float:
    """``eta = scale * d^2 * ln d`` (SPEC A5): the initial gradient is of order ``1/d^2``."""
    return positive_finite("eta scale", scale) * d**2 * math.log(d)


def default_train_eta(d: int, k: int, scale: float) -> float:
    """``scale * d^k * ln d``: SPEC A5's step size for ``k = 2``; the gradient of the scores at a
    near-uniform start is of order ``d^-k`` (the cross term is a product of ``k`` weights)."""
    return default_eta(d, scale) * float(d) ** (k - 2)


class QueryHeadsConfig(LibraryConfig):
    """The k-head query-vector model on k-sparse parity: what the one step and training share
    (SPEC A1, A2, A6)."""

    d: int = Field(ge=2, description="Input length (number of positions).")
    m: Count = Field(32, description="Embedding width; trainable parameters = heads * m.")
    k: Count = Field(2, description="Support size = number of heads (2 = XOR).")
    seeds: Count = Field(64, description="Number of independent replicas.")
    seed: Seed = 0
    attention: AttentionName = Field("softmax", description="Attention map.")
    eta: float | None = Field(None, gt=0, description="Step size (None: automatic).")
    eta_scale: float = Field(
        ETA_SCALE, gt=0, title="eta scale", description="Constant of the automatic step size."
    )
    init: Init = Field("antisymmetric", description="Initialization of the query vectors.")
    sign: Literal[-1, 1] = Field(-1, description="Label sign: y = sign * prod_{i in I} x_i.")
    noise: float = Field(0.0, ge=0, lt=0.5, description="Label-flip probability in [0, 0.5).")
    success_tol: float = Field(
        0.1, gt=0, title="success tolerance", description="Success: certified error <= this."
    )
    dtype: DType = Field("float64", description="Floating-point precision.")
    device: Device = Field("auto", description="Where to compute (auto: CUDA when available).")

    @model_validator(mode="after")
    def _heads_fit(self) -> QueryHeadsConfig:
        require(self.k <= self.d, f"k must be <= d={self.d}, got {self.k}")
        require(
            self.k <= MAX_EXACT_HEADS,
            f"k must be <= {MAX_EXACT_HEADS} (exact population loss), got {self.k}",
        )
        return self


class OneStepConfig(QueryHeadsConfig):
    """One population (or empirical) gradient step for ``seeds`` replicas (SPEC A5)."""

    eta: float | None = Field(None, gt=0, description="Step size; None: eta_scale * d^2 * ln d.")
    samples: int | None = Field(
        None, ge=1, description="None: the exact population gradient; N: empirical, N samples."
    )
    gradient: Literal["exact-samples", "surrogate"] = Field(
        "exact-samples",
        description="With samples N: draw the N inputs, or the Gaussian surrogate (sparse XOR).",
    )
    support: tuple[int, ...] | None = Field(
        None, description="Fixed support (default: uniform per replica)."
    )
    replica_batch: int | None = Field(
        None, ge=1, title="replica batch", description="Replicas per batch (None: automatic)."
    )

    @field_validator("support", mode="before")
    @classmethod
    def _support_tuple(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value

    @model_validator(mode="after")
    def _support_fits(self) -> OneStepConfig:
        if self.support is not None:
            distinct_indices("support", self.support, self.d, self.k)
        return self

    def step_size(self) -> float:
        return self.eta if self.eta is not None else default_eta(self.d, self.eta_scale)

    def batch_size(self) -> int:
        """Replicas per batch: ``batch x d x m`` under ``AUTO_BATCH_ELEMENTS`` unless
        ``replica_batch`` says otherwise, and always under ``BATCH_ELEMENTS``."""
        size = self.d * self.m
        auto = max(1, AUTO_BATCH_ELEMENTS // size)
        return min(self.seeds, self.replica_batch or auto, max(1, BATCH_ELEMENTS // size))

    def streamed(self, keep_embeddings: bool = False) -> bool:
        """Whether ``V`` is streamed: one replica's ``d x m`` exceeds ``BATCH_ELEMENTS``."""
        return not keep_embeddings and self.d * self.m > BATCH_ELEMENTS

    def stream_kept(self) -> bool:
        """Whether a streamed ``V`` keeps its chunks between products (``KEPT_STREAM_ELEMENTS``)."""
        return self.streamed() and self.batch_size() * self.d * self.m <= KEPT_STREAM_ELEMENTS

    def peak_bytes(self, keep_embeddings: bool = False) -> float:
        """About the most memory the step holds at once (``train.one_step``): a batch's ``V``
        and its cast (a stream's chunk), a dozen score-sized ``E x H x d`` arrays, an
        empirical step's block of inputs, the kept embeddings and the per-replica results."""
        batch, d, m = self.batch_size(), self.d, self.m
        held = 2 * batch * d * m
        if self.streamed(keep_embeddings):
            held = CHUNK_NUMBERS + (batch * d * m if self.stream_kept() else 0)
        kept = 2 * self.seeds * d * m if keep_embeddings else 0
        inputs = 0 if self.samples is None else 2 * batch * min(self.samples * d, 1 << 22)
        numbers = held + kept + 12 * batch * self.k * d + inputs + 4 * self.seeds * self.k * m
        return 8.0 * numbers


PRESET_HELP = {
    "quick": "The quick preset (default): about a minute on 2 cores; may be inconclusive.",
    "standard": "The sizes that separate the papers' laws from their rivals (SPEC Part D): "
    "about 25 minutes on 2 cores.",
    "full": "Paper-scale sizes, for a GPU or a cluster.",
}
"""The experiments' presets (``experiments.base.PRESETS``) and what each is for."""

CALIBRATION_BUDGET = 1.0
"""Seconds per experiment the plan's calibration may spend timing jobs (``--calibration``,
``engine.calibration``)."""

PREREGISTRATION_SEED = 3
"""The exploratory master seed whose run each criterion's error rates are fitted to, before any
confirmatory run (SPEC Part E, ``report.preregistration``); never judged in a replication."""
REPLICATION_FIRST_SEED = 4
"""``--replicate N`` judges master seeds ``4, 5, ...``: the first seeds no criterion was written
on and no error rate was fitted to (``report.replication``)."""
REPLICATION_MAX = 100
"""The most master seeds one replicated reproduction judges."""
REPLICATION_SHARE = 0.8
"""A replicated claim publishes the verdict reached on at least this share of its seeds (4 of
5), else ``unstable``."""

ADAM_LR = 0.05
"""Adam's default step (*choice*): the query vectors have unit norm at initialization."""
DEFAULT_ETA_SCALE = 2.0**-4
"""gd's default ``eta = eta_scale * d^k * ln d`` (*choice*, measured): the best step size of the
``kparity-steps`` standard grid (``2^j``, ``j = -6, -4, ..., 4``) at ``k = 3`` for six of the seven
``d = 16 ... 1024`` (median 2-3 steps to success; ``2^-2`` at ``d = 32``)."""


class XorTrainConfig(QueryHeadsConfig):
    """Training of ``seeds`` replicas for ``steps`` steps (``train.xor_train``, SPEC A6)."""

    seeds: Count = Field(16, description="Number of independent replicas.")
    steps: Count = Field(200, description="Training steps.")
    gradient: Literal["population", "fresh", "fixed"] = Field(
        "population",
        description="population: the exact gradient; fresh: samples new inputs a step; fixed: "
        "one training set.",
    )
    samples: int | None = Field(
        None, ge=1, description="fresh: inputs per step; fixed: training-set size."
    )
    cube_fraction: float | None = Field(
        None,
        gt=0,
        lt=1,
        title="cube fraction",
        description="Train (fixed) on this share of all 2^d inputs and test on the rest.",
    )
    batch: int | None = Field(
        None, ge=1, description="fixed: mini-batch rows per step (default: the whole set)."
    )
    optimizer: Literal["gd", "adam"] = Field("gd", description="Update rule.")
    eta: float | None = Field(
        None, gt=0, description=f"Step size; None: gd eta_scale * d^k * ln d, adam {ADAM_LR}."
    )
    eta_scale: float = Field(
        DEFAULT_ETA_SCALE,
        gt=0,
        title="eta scale",
        description="Constant of the automatic gd step size.",
    )
    adam_eps: float = Field(1e-8, gt=0, title="adam eps", description="Adam's epsilon.")
    stop_at_success: bool = Field(False, description="Stop once every replica has succeeded.")

    @model_validator(mode="after")
    def _data_fits(self) -> XorTrainConfig:
        if self.cube_fraction is not None:
            require(
                self.gradient != "fresh",
                "a cube fraction needs gradient 'fixed' (train on it) or 'population' (test only)",
            )
            require(self.d <= MAX_CUBE_D, f"a cube split needs d <= {MAX_CUBE_D}, got d={self.d}")
            require(self.samples is None, "give either samples or a cube fraction, not both")
            require(self.noise == 0, "a cube split uses clean labels: noise must be 0")
            require(0 < self.train_rows() < 2**self.d, "the cube split leaves an empty side")
        elif self.gradient != "population":
            require(
                self.samples is not None,
                f"gradient {self.gradient!r} needs samples (or, for 'fixed', a cube fraction)",
            )
        else:
            require(self.samples is None, "the population gradient takes no samples")
        rows = self.train_rows() if self.gradient == "fixed" else (self.samples or 0)
        require(
            self.seeds * rows * self.d <= MAX_DATA_ELEMENTS,
            f"seeds * samples * d must be <= {MAX_DATA_ELEMENTS} (the data is held at once), got "
            f"{self.seeds * rows * self.d}; use fewer seeds or samples",
        )
        require(
            self.batch is None or self.gradient == "fixed", "batch applies to gradient 'fixed' only"
        )
        return self

    def step_size(self) -> float:
        if self.eta is not None:
            return self.eta
        if self.optimizer == "adam":
            return ADAM_LR
        return default_train_eta(self.d, self.k, self.eta_scale)

    def train_rows(self) -> int:
        """Rows of the fixed training set (``0`` for the other gradients)."""
        if self.cube_fraction is not None:
            return round(self.cube_fraction * 2**self.d)
        return self.samples if self.samples is not None else 0

    def peak_bytes(self) -> float:
        """About the least memory training holds (``train.xor_train``; a lower bound, so that
        only a run that cannot fit is refused): the embeddings ``V``, a few score-sized
        ``E x k x d`` arrays, the data (training set or a step's samples, a cube split's test
        side) and the trajectories, ``E x (steps + 1) x (k^2 + 4)`` numbers."""
        rows = self.samples or 0
        if self.cube_fraction is not None:
            rows = 2**self.d  # both sides of the split
        numbers = self.seeds * self.d * (self.m + 4 * self.k + 2 * rows)
        return 8.0 * (numbers + self.seeds * (self.steps + 1) * (self.k**2 + 4))


class V1Config(LibraryConfig):
    """The authors' earlier k-parity model (``train.kparity_v1``), with their published
    defaults: ``n = 16``, ``k = 3``, 2000 epochs, 80% of the cube to train."""

    n: int = Field(16, ge=2, description="Input length n (the whole cube of 2^n inputs is used).")
    k: Count = Field(3, description="Support size = number of heads.")
    seeds: Count = Field(4, description="Number of independent replicas.")
    seed: Seed = 0
    epochs: Count = Field(2000, description="Full-batch Adam epochs.")
    lr: float = Field(0.01, gt=0, description="Adam's step size.")
    train_fraction: float = Field(
        0.8,
        gt=0,
        lt=1,
        title="train fraction",
        description="Share of the 2^n inputs to train on; the rest is tested.",
    )
    target: float | None = Field(
        None, gt=0, le=1, description="Stop once every replica's test accuracy reaches this."
    )

    @model_validator(mode="after")
    def _cube_fits(self) -> V1Config:
        require(self.k <= self.n, f"k must be <= n={self.n}, got {self.k}")
        require(self.n <= MAX_CUBE_D, f"n must be <= {MAX_CUBE_D} (the whole cube), got {self.n}")
        return self

    def peak_bytes(self) -> float:
        """About the least memory training holds (``train.kparity_v1``): every replica's split
        of the cube (inputs and bits, ``E x 2^n x n`` each), a forward pass's ``E x 2^n x k``
        and the trajectories, ``E x (epochs + 1) x (2k + 2)`` numbers."""
        cube = self.seeds * 2**self.n * (2 * self.n + self.k)
        return 8.0 * (cube + self.seeds * (self.epochs + 1) * (2 * self.k + 2))


# ------------------------------------------------------------------------ token selection (B)


def _subset_fits(q: int, T: int) -> None:
    require(q <= T, f"q must be <= T (q={q}, T={T})")


POSITION_LR_PER_DIM = 6 / 128
"""Learning rate per PE dimension when training the position block alone: the scale of
``W = alpha I`` grows like ``lr / m_p``, so ``lr = POSITION_LR_PER_DIM * m_p`` keeps the pace
(measured: converged in 300 population steps for ``T <= 80``, ``m_p <= 256``)."""


class SelectionTrainConfig(LibraryConfig):
    """Training the selector (``train.selection``, SPEC B3), with measured defaults (the
    optimizer and rate are discussed in that module's docstring)."""

    d: Count = Field(10, description="Token dimension.")
    T: Count = Field(20, description="Training sequence length.")
    q: Count = Field(3, description="Subset size.")
    pe: PEMode = Field("stochastic", description="Positional encoding.")
    pe_dim: Count = Field(128, description="Positional encoding width m_p.")
    pe_kind: PEKind = Field("sphere", description="Law of an encoding.")
    fixed_positions: int | None = Field(
        None, ge=1, description="Rows of a fixed PE table (None: T)."
    )
    trainable: Trainable = Field("full", description="Trained block of W.")
    objective: Literal["sgd", "population"] = Field(
        "sgd", description="sgd: sampled loss; population: exact over the tokens."
    )
    pe_draws: Literal["law", "explicit"] = Field(
        "law",
        description="Stochastic PE: draw only what a step depends on (law, exact in "
        "distribution) or every encoding (explicit).",
    )
    products: DType = Field(
        "float64",
        description="Precision of a law-drawn step's two products (W and its updates stay "
        "float64).",
    )
    steps: Count = Field(1500, description="Training steps.")
    batch: Count = Field(256, description="Fresh sequences per step.")
    lr: float = Field(3.0, gt=0, description="SGD rate, decays linearly to 0.")
    replicas: Count = Field(1, title="seeds (replicas)", description="Replicas E, trained at once.")
    seed: Seed = 0

    @model_validator(mode="after")
    def _fits(self) -> SelectionTrainConfig:
        _subset_fits(self.q, self.T)
        require(
            self.products == "float64" or (self.pe == "stochastic" and self.pe_draws == "law"),
            "products 'float32' needs pe 'stochastic' with pe_draws 'law' (the steps it speeds "
            f"up), got pe {self.pe!r}, pe_draws {self.pe_draws!r}",
        )
        if self.fixed_positions is not None:
            require(
                self.fixed_positions >= self.T,
                f"fixed_positions must be an integer >= {self.T}, got {self.fixed_positions!r}",
            )
        require(
            self.objective == "sgd" or self.trainable == "position",
            "objective 'population' needs trainable 'position' (a trainable content block "
            "makes the logits depend on the tokens)",
        )
        return self

    def peak_bytes(self) -> float:
        """About the most memory training holds: ``W`` with its gradient and mask, and a
        step's tokens and encodings with the autograd graph over them (float64)."""
        size = self.d + self.pe_dim
        curve = self.steps  # the loss of every step and replica
        return 8.0 * self.replicas * (4 * size**2 + 6 * self.batch * self.T * size + curve)

    def evaluation_bytes(self, lengths: list[int], size: int) -> float:
        """About the memory of the evaluation at the longest of ``lengths`` on ``size``
        sequences (``metrics.selection``): every replica's tokens and logits, the encodings,
        and a fixed PE's table."""
        longest = max(lengths)
        numbers = size * longest * (self.replicas * (self.d + 2) + 2 * self.pe_dim)
        return 8.0 * (numbers + longest * self.pe_dim)


# ------------------------------------------------------------------------ FCN baselines


SGD_LR, SGD_LR_TIMES_WIDTH, FCN_ADAM_LR = 0.1, 25.0, 1e-2
"""XOR defaults: SGD at ``min(SGD_LR, SGD_LR_TIMES_WIDTH / width)``, Adam at ``FCN_ADAM_LR``
(``train.fcn.xor``'s module docstring)."""
Optimizer = Annotated[Literal["adam", "sgd"], Field(description="Optimizer.")]


def default_xor_lr(optimizer: str, width: int) -> float:
    """The FCN's XOR learning rate when none is given."""
    return FCN_ADAM_LR if optimizer == "adam" else min(SGD_LR, SGD_LR_TIMES_WIDTH / width)


class FCNConfig(LibraryConfig):
    """What the fully-connected baselines share (``train.fcn``, SPEC A7.6, B5.4); a task's
    config adds its own fields, the defaults that differ, ``task`` and ``rate``."""

    width: Count = Field(description="Hidden width.")
    depth: Count = Field(1, description="Hidden layers.")
    replicas: Count = Field(title="seeds (replicas)", description="Independent replicas.")
    first_replica: int = Field(0, ge=0, description="Index of the first replica.")
    seed: Seed = 0
    steps: Count = Field(description="Training steps.")
    batch: Count = Field(256, description="Samples per step.")
    optimizer: Optimizer
    samples: int | None = Field(
        None, ge=1, description="None: fresh samples every step; n: one fixed set of n."
    )
    dtype: DType = Field("float64", description="Floating-point precision.")
    device: Device = Field("cpu", description="Where to compute (auto: CUDA when available).")

    @property
    def rate(self) -> float:
        """The learning rate used; each task's config says how it is chosen."""
        raise NotImplementedError

    @property
    def inputs(self) -> int:
        """The length of a net's input; each task's config says what it is."""
        raise NotImplementedError

    def peak_bytes(self) -> float:
        """About the most memory training holds: every replica's weights with their gradient
        and optimizer state, a batch's activations, the evaluation inputs and a fixed training
        set (``samples``)."""
        weights = self.inputs * self.width + (self.depth - 1) * self.width**2 + self.width
        activations = self.batch * (self.inputs + 3 * self.width * self.depth)
        evaluation = self.inputs * self.evaluation_rows
        fixed_set = (self.samples or 0) * (self.inputs + 1)
        numbers = self.replicas * (4 * weights + activations + evaluation + fixed_set)
        return (8.0 if self.dtype == "float64" else 4.0) * numbers

    @property
    def evaluation_rows(self) -> int:
        """Inputs per replica of the evaluation after training."""
        raise NotImplementedError


class XorFCNConfig(FCNConfig):
    """A two-layer ReLU net (``depth`` hidden layers) on k-sparse parity (SPEC A1, A7.6)."""

    d: int = Field(64, ge=2, description="Input length.")
    width: Count = Field(32, description="Hidden width; parameters = width*(d+2)+1.")
    k: Count = Field(2, description="Support size.")
    noise: float = Field(0.0, ge=0, lt=0.5, description="Label-flip probability in [0, 0.5).")
    replicas: Count = Field(8, title="seeds (replicas)", description="Independent replicas.")
    steps: Count = Field(
        2000, description="Most steps (a replica stops once perfect on validation)."
    )
    lr: float | None = Field(
        None,
        gt=0,
        description=f"Learning rate [default: sgd min({SGD_LR:g}, {SGD_LR_TIMES_WIDTH:g}/width), "
        f"adam {FCN_ADAM_LR:g}].",
    )
    optimizer: Optimizer = "sgd"
    loss: Literal["mse", "hinge"] = Field("mse", description="Training loss on the labels.")
    early_stop: bool = Field(True, description="Stop a replica once perfect on validation.")
    test_samples: Count = Field(8192, description="Fresh test samples per replica.")
    success_tol: float = Field(0.01, ge=0, le=1, description="Success: test sign error <= this.")

    @model_validator(mode="after")
    def _support_fits(self) -> XorFCNConfig:
        require(self.k <= self.d, f"k must be <= d={self.d}, got {self.k}")
        return self

    @property
    def rate(self) -> float:
        """The learning rate used: ``lr``, or the default for the optimizer and width."""
        return default_xor_lr(self.optimizer, self.width) if self.lr is None else self.lr

    @property
    def inputs(self) -> int:
        return self.d

    @property
    def evaluation_rows(self) -> int:
        return self.test_samples


class SelectionFCNConfig(FCNConfig):
    """An MLP on ``[vec X ; 1_y]`` (length ``T·d + T``) with output in ``R^d`` (SPEC B5.4)."""

    d: Count = Field(4, description="Token dimension.")
    T: Count = Field(8, description="Sequence length.")
    q: Count = Field(2, description="Subset size.")
    width: Count = Field(64, description="First-layer width.")
    replicas: Count = Field(4, title="seeds (replicas)", description="Replicas.")
    steps: Count = Field(3000, description="Training steps.")
    lr: float = Field(3e-3, gt=0, description="Adam learning rate.")
    optimizer: Optimizer = "adam"
    eval_samples: int = Field(4096, ge=2, description="Sequences of the evaluation set.")

    @model_validator(mode="after")
    def _subset_fits(self) -> SelectionFCNConfig:
        _subset_fits(self.q, self.T)
        return self

    @property
    def rate(self) -> float:
        return self.lr

    @property
    def inputs(self) -> int:
        """``vec X`` and the subset's indicator: ``T·d + T``."""
        return self.T * self.d + self.T

    @property
    def evaluation_rows(self) -> int:
        return self.eval_samples


# ------------------------------------------------------------------------ m_p* search (B5.2, C)

FAMILY_SAMPLES = 4096
"""Sequences per draw of the ``W = αI`` family's loss (``exact.family``): the best loss's
standard error is then about 1.5% of the loss."""
SELECTION_TARGET = 0.2
"""``m_p*`` success (``selection_threshold``): loss at most this fraction of the
uniform-attention loss ``d (T − q) / (q T)``."""
SELECTION_RIVAL_MIN_ALPHA = 0.3
"""The rival of the ``m_p*`` held-out test (``selection_threshold``): ``c T^alpha`` with
``alpha >= 0.3``."""
