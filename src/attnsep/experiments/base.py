"""What an experiment is: a typed config, jobs, records, a figure and a verdict (SPEC A7, B5).

An experiment splits its config into independent *jobs* (smaller configs, e.g. one grid
point each); ``run`` turns one job into plain records (JSON-able dicts); ``figure`` draws
all records; ``verdict`` compares them with the paper's claim. Experiments never import
the engine, the store or the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, TypeVar, cast

from pydantic import ConfigDict, Field, model_validator

from ..configs import PRESET_HELP, ConfigBase, Seed
from ..core.validate import shown
from .built_ins import entry
from .registry import REGISTRY

if TYPE_CHECKING:  # numpy only where a claim is calibrated: the command line starts without it
    from ..metrics import calibration

Record = dict[str, Any]


InputLength = Annotated[int, Field(ge=2)]
"""Item types for list fields, so that every grid point is checked."""
Positive = Annotated[int, Field(ge=1)]
Exponent = Annotated[float, Field(ge=-300, le=300)]


class ExperimentConfig(ConfigBase):
    """Base of every experiment config: unknown keys, wrong types, NaN and infinity are errors,
    each one line (``configs.ConfigBase``)."""

    model_config = ConfigDict(use_attribute_docstrings=True)  # merged with ConfigBase's
    errors_by_key: ClassVar[bool] = True
    seed: Seed = 0


class SubsetConfig(ExperimentConfig):
    """Token-selection configs: the subset size ``q`` may not exceed the length ``T``."""

    @model_validator(mode="after")
    def _q_fits(self):  # noqa: ANN202
        T = getattr(self, "T", None)
        lengths = [T] if T is not None else list(getattr(self, "T_values", []))
        for length in lengths:
            if self.q > length:
                raise ValueError(f"q must be <= T, got q={self.q} and T={length}")
        return self


C = TypeVar("C", bound=ExperimentConfig)


def parse_config(config_type: type[C], data: dict[str, Any], where: str) -> C:
    """Validate ``data`` into ``config_type``; a failure is one ``ValueError`` line, prefixed
    with ``where`` (the experiment's name) unless the config names itself (``label``)."""
    try:
        return config_type(**data)
    except ValueError as err:
        raise ValueError(str(err) if config_type.label else f"{where}: {err}") from None


@dataclass(frozen=True)
class Experiment(Generic[C]):
    """One claim of the papers, made runnable."""

    name: str
    claim: str  # SPEC section, e.g. "A7.1"
    title: str
    paper: str  # the paper's statement, in words
    config_type: type[C]
    run: Callable[[Any], list[Record]]
    figure: Callable[[list[Record], Any, Path], list[Path]]
    verdict: Callable[[list[Record], Any], dict[str, Any]]
    split: Callable[[Any], list[Any]] = lambda config: [config]
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    version: int = 1  # bump when run() changes its results: stored jobs are then recomputed
    priced_from: int = 1
    """The oldest version whose jobs cost what this version's do: ``--plan`` prices a job from
    the store's rows of its config at versions ``priced_from`` to ``version`` only."""
    kind: str = "claim"
    """``claim``, ``check`` or ``finding`` (SPEC Part F, ``stats.KINDS``): the entry's kind while
    its jobs are unfinished; a judged entry takes the kind of its verdict."""
    section: str = "the papers' claims"  # the report section (report.html.PAPERS)
    companions: tuple[str, ...] = ()
    """The ids of the further entries its verdict may judge from the same records, in order
    (``stats.claim``'s ``companions``, e.g. A7.3b beside A7.3; some only at some configs)."""
    hypotheses: Callable[[list[Record], Any], calibration.Hypotheses] | None = None
    """The paper's law and the rival fitted to a run, to measure the criterion's error rates
    (SPEC Part E); ``None`` for a claim that is a finding, not a test of a law or bound."""
    criterion_version: int = 1  # bump when the verdict's criterion changes
    tuned_on: tuple[int, ...] = (0,)
    """Master seeds whose runs were seen before the criterion was written (exploratory runs);
    a run on any other seed is confirmatory (SPEC Part E)."""
    work: Callable[[dict[str, Any]], float | dict[str, float]] | None = None
    """The work of one job from its stored config (``experiments.costs``), by part where its
    models differ: the plan scales timed jobs by it (``engine.cost_model``); ``None``: no
    estimate beyond the timed jobs."""
    searches: bool = False
    """Whether ``work`` takes a threshold the job searches for from the paper's law."""
    peak: Callable[[dict[str, Any]], float] | None = None
    """The most memory (bytes) one job holds, from its stored config: a sweep refuses a job
    that cannot fit before it starts (``engine.sweep.check_memory``); ``None``: unchecked."""

    def config(self, preset: str = "quick", **overrides: Any) -> C:
        """The preset's config (:func:`preset_overrides`) with ``overrides`` applied."""
        base = {**preset_overrides(self, preset), **overrides}
        return parse_config(self.config_type, base, self.name)

    def run_kind(self, seed: int) -> str:
        """``exploratory`` for a master seed the criterion was tuned on, else ``confirmatory``."""
        return "exploratory" if seed in self.tuned_on else "confirmatory"

    def larger(self, config: Any) -> list[tuple[str, Any]]:
        """The configs a calibration tries, in turn, when ``config`` misses the goals: twice and
        four times the seeds (``more_seeds``), then the ``full`` preset."""
        candidates: list[tuple[str, Any]] = []
        if more_seeds(config, 1):
            candidates += [
                (f"{k}x the seeds", config.model_copy(update=more_seeds(config, k))) for k in (2, 4)
            ]
        if "full" in self.presets:
            candidates.append(("the full preset", self.config("full", seed=config.seed)))
        return candidates

    def calibrate(
        self, records: list[Record], config: Any, simulations: int | None = None
    ) -> dict[str, Any] | None:
        """The criterion's error rates at ``config`` (``metrics.calibration.calibrate``), the
        laws fitted to ``records`` and redrawn in every simulation (``redrawable``); when
        they miss the goals, the first of twice and four times the seeds (``more_seeds``), then
        the ``full`` preset, whose simulated rates meet them. ``None`` without ``hypotheses``."""
        from ..metrics import calibration

        if self.hypotheses is None:
            return None
        return calibration.calibrate(
            self.verdict,
            calibration.redrawable(self.hypotheses, records, config),
            config,
            self.larger(config),
            simulations or calibration.SIMULATIONS,
            seed=config.seed,
        )


def preset_overrides(experiment: Experiment[Any], preset: str) -> dict[str, Any]:
    """The fields ``preset`` sets over the config's defaults; a claim without a ``standard``
    preset runs its ``quick`` sizes there."""
    fallback = experiment.presets.get("quick", {}) if preset == "standard" else {}
    return dict(experiment.presets.get(preset, fallback))


def more_seeds(config: Any, factor: int) -> dict[str, Any]:
    """``factor`` times every seed count of ``config``: the fields named ``seeds`` or
    ``seeds_...``, whole numbers or mappings to them (e.g. ``seeds_by_d``)."""
    out: dict[str, Any] = {}
    for name in type(config).model_fields:
        value = getattr(config, name)
        if name == "seeds" or name.startswith("seeds_"):
            if isinstance(value, int):
                out[name] = factor * value
            elif isinstance(value, dict):
                out[name] = {k: factor * v for k, v in value.items()}
    return out


PRESETS = tuple(PRESET_HELP)
"""``quick``, ``standard``, ``full`` (``configs.PRESET_HELP``)."""


def register(experiment: Experiment[C]) -> Experiment[C]:
    """Add ``experiment`` to the registry under its name (a name already there is replaced).

    From then on ``attnsep.api`` lists it (``experiments``, ``list_experiments``) and runs it
    (``run_experiment``, ``sweep``, ``reproduce(names=[...])``) like the built-in ones, in this
    process: a worker of the ``process`` or ``ray`` executor starts a fresh interpreter that
    loads only the built-in modules (``modules.MODULES``), so an experiment registered
    elsewhere runs with ``executor="inline"``. ``experiments.unregister`` removes it. Its config's
    errors name it (``ConfigBase.label``)."""
    REGISTRY[experiment.name] = experiment
    experiment.config_type.label = experiment.name
    return experiment


def from_package(
    name: str,
    config: ModuleType,
    run: ModuleType,
    verdict: ModuleType,
    figure: ModuleType,
    calibration: ModuleType | None = None,
    /,
    **settings: Any,
) -> Experiment[Any]:
    """The built-in experiment ``name`` from its package's modules (docs/layout.md): its entry
    in ``built_ins``, ``config.Config`` and ``config.PRESETS``, ``run.run``, ``run.split``,
    ``run.work`` and ``run.peak``, ``verdict.verdict``, ``figure.figure`` and, where given,
    ``calibration.hypotheses``; ``settings`` gives the rest (``version``, ``kind``,
    ``tuned_on``, ...) or another part in place of one of these."""
    parts: dict[str, Any] = {
        "config_type": config.Config,
        "presets": config.PRESETS,
        "run": run.run,
        "split": run.split,
        "work": run.work,
        "peak": run.peak,
        "verdict": verdict.verdict,
        "figure": figure.figure,
    }
    if calibration is not None:
        parts["hypotheses"] = calibration.hypotheses
    return Experiment(**entry(name), **{**parts, **settings})


def get(name: str) -> Experiment[Any]:
    from .modules import load_all

    load_all()
    if not isinstance(name, str) or name not in REGISTRY:
        raise ValueError(
            f"experiment must be one of {', '.join(sorted(REGISTRY))}; got {shown(name)} (one "
            "registered in another process, e.g. a notebook, is unknown here: run it inline)"
        )
    return cast(Experiment[Any], REGISTRY[name])  # only ``register`` fills it
