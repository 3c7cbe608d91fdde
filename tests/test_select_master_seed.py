"""A token-selection run on another master seed draws new data (SPEC Part E: a confirmatory run is
a fresh one), and master seed 0 keeps the replicas' own numbers (the published runs)."""

from attnsep.experiments import base

TINY = {"d": 2, "T": 4, "q": 1, "pe_dims": [8], "steps": 5, "seeds": [0, 1], "eval_size": 16}
TINY |= {"family_samples": 32, "paper_widths": []}


def test_master_seed_zero_keeps_the_replica_numbers_and_another_draws_anew():
    exp = base.get("select-convergence")
    zero, four = exp.config("quick", **TINY), exp.config("quick", **TINY, seed=4)
    assert zero.replica_seeds == [0, 1]
    assert len(set(four.replica_seeds)) == 2 and not set(four.replica_seeds) & {0, 1}
    losses = {
        master: sorted(r["loss"] for r in exp.run(config) if "loss" in r)
        for master, config in ((0, zero), (4, four))
    }
    assert len(losses[0]) == len(losses[4]) == 2 and losses[0] != losses[4]
    assert exp.run(zero) == exp.run(zero)  # the same master seed, the same records
