"""Every experiment at a tiny size: jobs, records, verdict and figure (SPEC A7, B5)."""

from __future__ import annotations

import json

import pytest

from attnsep.experiments import base, load_all
from attnsep.metrics.stats import KINDS

TINY = {
    "kparity-steps": {
        "series": [{"k": 3, "d_values": [8, 16, 32]}],
        "m": 8,
        "seeds": 4,
        "eta_exponents": [-2.0, 0.0],
        "budget": 6,
    },
    "one-step": {"d_values": [16, 32], "m_values": [4], "schedule_scale": 0.5, "seeds": 4},
    "polylog-width": {"d_values": [16, 32, 64], "seeds": 4, "m_limit": 64},
    "attention-maps": {"d": 16, "m": 8, "seeds": 2, "budget": 3, "eta_exponents": [2.0, 4.0]},
    "head-specialization": {
        "d_values": [16, 32],
        "m": 8,
        "seeds": 4,
        "shown": 2,
        "schedule_d_values": [16, 32],
        "seeds_schedule": 4,
    },
    "finite-samples": {
        "d_values": [8, 16],
        "seeds": 4,
        "n_max": 512,
        "multistep_d_values": [8, 16],
        "multistep_seeds": 4,
    },
    "select-convergence": {
        "d": 2,
        "T": 4,
        "q": 1,
        "pe_dims": [8, 16],
        "steps": 20,
        "seeds": [0, 1],
        "eval_size": 16,
        "family_samples": 64,
        "paper_widths": [8],
        "paper_batch": 32,
        "paper_steps_per_dim": 2.0,
        "paper_eval_size": 64,
    },
    "select-width": {
        "T_values": [4, 6, 8],
        "q_values": [1],
        "d_values": [2],
        "seeds": 2,
        "batch": 16,
        "eval_size": 64,
        "max_steps": 50,
        "m_limit": 8,
    },
    "length-generalization": {
        "d": 2,
        "T": 4,
        "q": 1,
        "pe_dim": 8,
        "steps": 20,
        "factors": [1, 2],
        "eval_size": 16,
        "seeds": [0, 1],
        "family_samples": 64,
        "corollary_widths": [4, 8],
    },
    "separation-xor": {"d_values": [8, 16], "fcn_d_values": [8], "seeds": 2, "fcn_steps": 200},
    "separation-select": {
        "d": 4,
        "q_values": [1],
        "T_values": [4, 6, 8],
        "seeds": 2,
        "batch": 16,
        "eval_size": 64,
        "max_steps": 50,
        "m_limit": 8,
    },
    "fcn-selection": {
        "settings": [[4, 1, 1], [6, 1, 2]],
        "width_fractions": [0.5, 2.0],
        "fcn_steps": 20,
        "selector_steps": 20,
        "eval_size": 16,
    },
    "fixed-embeddings": {"d_values": [5, 6, 7], "k_values": [1, 2], "seeds": 10},
    "ffnn-width": {"d_values": [8, 10, 12], "seeds": 3, "steps": 100, "width_limit": 4},
    "sample-baselines": {"d_values": [6, 8, 12], "seeds": 40, "mlp_seeds": 10, "max_samples": 4096},
    "rotated-basis": {
        "d_values": [8, 16],
        "seeds": 4,
        "budget": 3,
        "floor_restarts": 2,
        "floor_steps": 20,
        "mlp_seeds": 2,
        "mlp_steps": 20,
        "mlp_batch": 16,
        "mlp_width": 8,
        "test_samples": 128,
    },
    "cls-equivalence": {"sizes": [[6, 3], [12, 4]], "seeds": 3, "steps": 3},
    "one-head": {"d_values": [16, 32], "seeds": 4, "budget": 3},
    "select-width-qd": {
        "T": 6,
        "d_values": [2, 3],
        "q_values": [1, 2],
        "seeds": 2,
        "batch": 8,
        "monitor": 8,
        "eval_size": 16,
        "max_steps": 25,
        "m_limit": 4,
        "family_start": False,
    },
    "fixed-pe": {
        "d": 2,
        "T": 4,
        "q": 1,
        "pe_dim": 8,
        "steps": 20,
        "eval_size": 16,
        "seeds": [0, 1],
        "checkpoints": 4,
    },
    "randomized-pe": {
        "d": 2,
        "q": 1,
        "T": 6,
        "pe_dim": 8,
        "steps": 10,
        "eval_lengths": [6, 12, 30],
        "eval_size": 16,
        "family_samples": 64,
        "seeds": [0, 1],
    },
    "select-full-w": {
        "d": 2,
        "T": 4,
        "q": 1,
        "pe_dims": [8],
        "seeds": [0, 1],
        "samples": 64,
        "family_samples": 64,
        "curvature_samples": 32,
        "check_samples": 4,
        "steps": 50,
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
    assert claim["verdict"] in KINDS[exp.kind] and claim["reason"]  # a check is no claim
    for e in claim["estimates"]:  # every number carries an interval that contains it
        if e["value"] is not None and e["low"] is not None and e["high"] is not None:
            assert e["low"] <= e["value"] <= e["high"], e
    paths = exp.figure(records, config, tmp_path)
    assert paths and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
    # every preset is a valid config
    for preset in base.PRESETS:
        exp.config(preset)


def test_unknown_config_key_is_one_line():
    exp = base.get("one-step")
    with pytest.raises(ValueError, match=r"^unknown field 'd_valuez' for one-step; allowed: "):
        exp.config("quick", d_valuez=[16])
