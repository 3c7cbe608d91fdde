"""Every experiment at a tiny size: jobs, records, verdict and figure (SPEC A7, B5)."""

from __future__ import annotations

import json

import pytest

from attnsep.experiments import base, load_all
from attnsep.metrics.stats import OUTCOMES

TINY = {
    "one-step": {"d_values": [16, 32], "m_values": [4, 8], "seeds": 4},
    "polylog-width": {"d_values": [16, 64], "seeds": 4, "m_limit": 64},
    "attention-maps": {"d": 16, "m": 8, "seeds": 2, "gd_steps": 3, "eta_exponents": [2.0, 4.0]},
    "head-specialization": {"d": 16, "m": 8, "seeds": 4, "shown": 2},
    "finite-samples": {"d_values": [8, 16], "n_values": [64, 512], "seeds": 4},
    "select-convergence": {"d": 2, "T": 4, "q": 1, "pe_dim": 8, "steps": 20, "seeds": [0]},
    "select-width": {"d": 2, "T_values": [4, 6], "q": 1, "pe_dims": [4, 8], "steps": 20},
    "length-generalization": {
        "d": 2,
        "T": 4,
        "q": 1,
        "pe_dim": 8,
        "steps": 20,
        "factors": [1, 2],
        "eval_size": 16,
    },
    "separation-xor": {"d_values": [8, 16], "seeds": 2, "groups": 2},
    "separation-select": {"d": 4, "T_values": [4, 8], "seeds": 2, "groups": 2},
    "fcn-selection": {
        "d": 1,
        "T": 4,
        "q": 1,
        "widths": [2, 8],
        "fcn_steps": 50,
        "replicas": 2,
        "pe_dim": 4,
        "selector_steps": 20,
    },
}


def test_every_experiment_has_a_tiny_config():
    load_all()
    assert set(TINY) == set(base.REGISTRY)


@pytest.mark.parametrize("name", sorted(TINY))
def test_experiment_end_to_end(name, tmp_path):
    exp = base.get(name)
    config = exp.config("quick", **TINY[name])
    jobs = exp.split(config)
    assert jobs, "an experiment has at least one job"
    records = [record for job in jobs for record in exp.run(job)]
    assert records
    json.dumps(records, allow_nan=False)  # plain, finite JSON
    claim = exp.verdict(records, config)
    assert {"measured", "verdict", "criterion"} <= set(claim)
    assert claim["verdict"] in (*OUTCOMES, "reproduced (bound is loose)")
    paths = exp.figure(records, config, tmp_path)
    assert paths and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
    # every preset is a valid config
    for preset in base.PRESETS:
        exp.config(preset)


def test_unknown_config_key_is_one_line():
    exp = base.get("one-step")
    with pytest.raises(ValueError, match="one-step: d_valuez=.*Extra inputs are not permitted"):
        exp.config("quick", d_valuez=[16])
