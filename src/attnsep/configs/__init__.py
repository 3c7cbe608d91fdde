"""The library's run configs: every default, limit and help text written once.

Frozen pydantic models with their limits as field constraints; they import neither torch nor
the modules that do, so the command line builds and checks a config before loading torch. The
training modules re-export them under their old homes (``one_step.OneStepConfig``, ...),
experiment configs take their defaults from them (:func:`inherit`, :func:`default`) and CLI
options their default and help (``cli.options``). Pure data: how much memory a run of
one holds is ``train.memory``'s.

A bad value raises a one-line ``ValueError`` naming it and what is allowed (``d must be an
integer >= 2, got 1``), derived from the field's constraints; the CLI turns it into
``error: ...`` and exit code 2.

One module per idea, every name imported from here: ``base`` (the base classes, shared limits),
``xor`` (the query-vector model on sparse parity, SPEC A), ``selection`` (the selector, SPEC B),
``fcn`` (the FCN baselines), ``runs`` (presets, calibration, preregistration and replication).
"""

from ..core.validate import allowed as allowed  # re-exported for the CLI (its help lists choices)
from ..core.validate import require as require  # re-exported for the CLI's own checks
from .base import ATTENTION_MAPS as ATTENTION_MAPS
from .base import EVAL_SIZE as EVAL_SIZE
from .base import INITS as INITS
from .base import MAX_CUBE_D as MAX_CUBE_D
from .base import MAX_DATA_ELEMENTS as MAX_DATA_ELEMENTS
from .base import MAX_EXACT_HEADS as MAX_EXACT_HEADS
from .base import PE_KINDS as PE_KINDS
from .base import TRAINABLE as TRAINABLE
from .base import AttentionName as AttentionName
from .base import ConfigBase as ConfigBase
from .base import Count as Count
from .base import Device as Device
from .base import DType as DType
from .base import Init as Init
from .base import LibraryConfig as LibraryConfig
from .base import PEKind as PEKind
from .base import PEMode as PEMode
from .base import Seed as Seed
from .base import Trainable as Trainable
from .base import Word as Word
from .base import default as default
from .base import inherit as inherit
from .fcn import FCN_ADAM_LR as FCN_ADAM_LR
from .fcn import SGD_LR as SGD_LR
from .fcn import SGD_LR_TIMES_WIDTH as SGD_LR_TIMES_WIDTH
from .fcn import FCNConfig as FCNConfig
from .fcn import Optimizer as Optimizer
from .fcn import SelectionFCNConfig as SelectionFCNConfig
from .fcn import XorFCNConfig as XorFCNConfig
from .fcn import default_xor_lr as default_xor_lr
from .runs import CALIBRATION_BUDGET as CALIBRATION_BUDGET
from .runs import PREREGISTRATION_SEED as PREREGISTRATION_SEED
from .runs import PRESET_HELP as PRESET_HELP
from .runs import REPLICATION_FIRST_SEED as REPLICATION_FIRST_SEED
from .runs import REPLICATION_MAX as REPLICATION_MAX
from .runs import REPLICATION_SHARE as REPLICATION_SHARE
from .selection import FAMILY_SAMPLES as FAMILY_SAMPLES
from .selection import POSITION_LR_PER_DIM as POSITION_LR_PER_DIM
from .selection import SELECTION_RIVAL_MIN_ALPHA as SELECTION_RIVAL_MIN_ALPHA
from .selection import SELECTION_TARGET as SELECTION_TARGET
from .selection import SelectionTrainConfig as SelectionTrainConfig
from .xor import ADAM_LR as ADAM_LR
from .xor import DEFAULT_ETA_SCALE as DEFAULT_ETA_SCALE
from .xor import ETA_SCALE as ETA_SCALE
from .xor import OneStepConfig as OneStepConfig
from .xor import QueryHeadsConfig as QueryHeadsConfig
from .xor import V1Config as V1Config
from .xor import XorTrainConfig as XorTrainConfig
from .xor import default_eta as default_eta
from .xor import default_train_eta as default_train_eta
