"""The authors' earlier k-parity model, rebuilt (``models.kparity_v1``, ``train.kparity_v1``):
its pieces are the described ones, it can represent k-parity, and its training is what the
description says (a fixed split of the cube, Adam, test accuracy on the rest)."""

from __future__ import annotations

import math

import pytest
import torch

from attnsep.exact.parity import cube
from attnsep.models import kparity_v1 as v1
from attnsep.train.kparity_v1 import V1Config, train_v1
from attnsep.train.xor_train import cube_split
from cli_support import attnsep


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_readout_is_parity_at_every_count(k: int) -> None:
    t = torch.arange(k + 1, dtype=torch.float64)
    torch.testing.assert_close(v1.readout(t, k), torch.remainder(t, 2), rtol=0, atol=0)


def test_embedding_and_two_trainable_entries() -> None:
    bits = torch.tensor([[1.0, 0.0, 1.0, 1.0]], dtype=torch.float64)
    e = v1.embed(bits)
    assert e.shape == (1, 4, 4)
    torch.testing.assert_close(e[0, :, 0] + e[0, :, 1], torch.ones(4, dtype=torch.float64))
    torch.testing.assert_close(
        e[0, 1, 2:], torch.tensor([0.0, 1.0], dtype=torch.float64), atol=1e-15, rtol=0
    )
    params = torch.randn(2, 3, 2, dtype=torch.float64)
    A = v1.attention_matrices(params)
    assert A.shape == (2, 3, 4, 4) and int((A != 0).sum()) == 2 * 3 * 2
    # the scores are q^T A e_i, whatever the bits
    s = v1.scores(params, 4)
    q = torch.tensor(v1.READ_QUERY, dtype=torch.float64)
    for bitrow in (bits[0], 1 - bits[0]):
        e = v1.embed(bitrow[None])[0]
        torch.testing.assert_close(torch.einsum("r,ekrc,ic->eki", q, A, e), s)


@pytest.mark.parametrize(("n", "support"), [(8, [1, 4, 6]), (16, [0, 5, 11]), (12, [2, 3, 7, 9])])
def test_hand_set_parameters_represent_parity_on_the_whole_cube(n: int, support: list[int]) -> None:
    r = 200.0  # sharp heads: each points at one support position
    phi = v1.angles(n)[support]
    params = torch.stack([r * phi.cos(), r * phi.sin()], dim=-1)[None]
    bits = (cube(n)[None] + 1) / 2
    labels = v1.parity_bits(bits, torch.tensor([support]))
    predicted = (v1.forward(params, bits) > 0.5).double()
    assert bool((predicted == labels).all())


def test_training_uses_the_split_and_is_independent_per_replica() -> None:
    base = dict(n=8, k=2, epochs=5, lr=0.05)
    few, many = train_v1(V1Config(seeds=2, **base)), train_v1(V1Config(seeds=3, **base))
    torch.testing.assert_close(torch.from_numpy(few.loss), torch.from_numpy(many.loss[:2]))
    torch.testing.assert_close(
        torch.from_numpy(few.test_accuracy), torch.from_numpy(many.test_accuracy[:2])
    )
    assert few.params.shape == (2, 6, 2, 2)
    # accuracy is measured on the inputs left out of training, with the trained parameters
    _, x_test = cube_split(8, 0.8, 0, 2)
    bits = (x_test + 1) / 2
    labels = v1.parity_bits(bits, torch.from_numpy(few.support))
    params = torch.from_numpy(few.params[:, -1])
    accuracy = ((v1.forward(params, bits) > 0.5).double() == labels).double().mean(dim=1)
    torch.testing.assert_close(accuracy, torch.from_numpy(few.test_accuracy[:, -1]))
    assert math.isclose(few.loss[0, 0], float(few.loss[0, 0]))


def test_target_stops_training_early() -> None:
    result = train_v1(V1Config(n=6, k=1, seeds=2, epochs=400, lr=0.2, target=1.0))
    reached = result.epochs_to_accuracy(1.0)
    assert all(r is not None for r in reached)
    assert result.epochs_run == max(reached) < 400


def test_bad_config_and_command() -> None:
    with pytest.raises(ValueError, match="n must be <= 20"):
        V1Config(n=24)
    with pytest.raises(ValueError, match="train fraction must be in"):
        V1Config(train_fraction=1.0)
    proc = attnsep(
        "xor", "train-v1", "--n", "8", "--k", "2", "--epochs", "3", "--seeds", "2", "--json"
    )
    assert proc.returncode == 0, proc.stderr
    report = proc.json()
    assert report["epochs_run"] == 3 and report["trainable_params"] == 4
    assert len(report["epochs_to_0.95"]) == 2
    bad = attnsep("xor", "train-v1", "--lr", "0")
    assert bad.returncode == 2 and bad.stderr.startswith("error: lr must be a finite number > 0")
