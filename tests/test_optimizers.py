"""The optimizers of ``train.optimizers`` step exactly as ``torch.optim``'s (bit for bit), and
using them never imports ``torch._dynamo``."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from attnsep.train import optimizers


def params_and_grads(seed: int, steps: int) -> tuple[list[torch.Tensor], list[list[torch.Tensor]]]:
    gen = torch.Generator().manual_seed(seed)
    shapes = [(4, 3, 5), (4, 1, 5), (7,)]
    params = [torch.randn(s, dtype=torch.float64, generator=gen) for s in shapes]
    grads = [
        [torch.randn(s, dtype=torch.float64, generator=gen) * 10.0 ** (t % 5 - 2) for s in shapes]
        for t in range(steps)
    ]
    return params, grads


@pytest.mark.parametrize("name", ["Adam", "SGD"])
def test_each_step_is_torch_optims_bit_for_bit(name: str) -> None:
    params, grads = params_and_grads(3, 40)
    ours = [p.clone().requires_grad_(True) for p in params]
    theirs = [p.clone().requires_grad_(True) for p in params]
    mine = getattr(optimizers, name)(ours, 0.01)
    reference = getattr(torch.optim, name)(theirs, lr=0.01)
    for step in grads:
        for a, b, g in zip(ours, theirs, step, strict=True):
            a.grad, b.grad = g.clone(), g.clone()
        mine.step()
        reference.step()
        assert all(torch.equal(a, b) for a, b in zip(ours, theirs, strict=True))
        mine.zero_grad()
        assert all(p.grad is None for p in ours)
    if name == "Adam":
        for a, b in zip(ours, theirs, strict=True):
            state, ref = mine.state[a], reference.state[b]
            assert state["step"] == ref["step"].item() == len(grads)
            assert torch.equal(state["exp_avg"], ref["exp_avg"])
            assert torch.equal(state["exp_avg_sq"], ref["exp_avg_sq"])


def test_a_parameter_without_a_gradient_is_left_as_it_is() -> None:
    p, q = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    adam = optimizers.Adam([p, q], 0.1)
    p.grad = torch.ones(3)
    adam.step()
    assert torch.equal(q, torch.ones(3)) and q not in adam.state
    assert (p < 1).all() and adam.state[p]["step"] == 1


def test_training_an_fcn_does_not_import_torch_dynamo() -> None:
    code = (
        "import sys\n"
        "from attnsep.configs import XorFCNConfig\n"
        "from attnsep.train.fcn import train_xor\n"
        "train_xor(XorFCNConfig(d=8, width=4, seeds=2, steps=20, optimizer='adam'))\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
