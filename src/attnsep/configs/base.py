"""What every config shares: the base classes, their one-line errors, :func:`default` and
:func:`inherit`, and the limits several configs check (SPEC A2, A4, B2)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
)

from ..core.validate import Registered, one_line, oversized, shown

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


@dataclass(frozen=True)
class Word:
    """A word the command line takes for an optional number's ``None`` (``--eta auto``):
    ``Annotated[float | None, Word("auto")]``; the field's description says what ``None`` does."""

    word: str


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
