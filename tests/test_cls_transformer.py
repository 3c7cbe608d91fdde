"""The CLS attention block equals the query-vector model, forward and one step (SPEC A3)."""

from __future__ import annotations

import pytest
import torch

from attnsep.exact.parity import cube, population_loss
from attnsep.models.cls_transformer import ClsTransformer, random_orthogonal
from attnsep.models.query_heads import QueryHeads, initial_queries
from attnsep.tasks.parity import SparseParity
from attnsep.train.parity import gradient_step, label_correlation, population_objective

E = 3


def setup(d: int, m: int, heads: int, seed: int = 0) -> tuple[QueryHeads, torch.Tensor]:
    """Embeddings and query vectors large enough that the softmax is far from uniform."""
    model = QueryHeads.sample(seed, E, d, m)
    return model, 3.0 * initial_queries(seed, E, heads, m, "independent")


def unit_random(width: int, seed: int) -> torch.Tensor:
    g = torch.randn(width, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return g / g.norm()


def signs(n: int, d: int, seed: int = 1) -> torch.Tensor:
    bits = torch.randint(0, 2, (E, n, d), generator=torch.Generator().manual_seed(seed))
    return (2 * bits - 1).to(torch.float64)


def non_orthogonal(heads: int, m: int, seed: int = 5) -> torch.Tensor:
    g = torch.randn(
        E, heads, m, m, generator=torch.Generator().manual_seed(seed), dtype=torch.float64
    )
    return torch.eye(m, dtype=torch.float64) + 0.4 * g / m**0.5


@pytest.mark.parametrize("d, m, heads", [(6, 4, 2), (12, 8, 3), (40, 16, 2)])
@pytest.mark.parametrize(
    "keys, scale", [("identity", 1.0), ("orthogonal", 1.0), ("general", 1.0), ("orthogonal", 0.5)]
)
def test_forward_matches_query_heads(d: int, m: int, heads: int, keys: str, scale: float) -> None:
    model, theta = setup(d, m, heads)
    W_K = {
        "identity": None,
        "orthogonal": random_orthogonal(2, E, heads, m),
        "general": non_orthogonal(heads, m),
    }[keys]
    block = ClsTransformer.from_query_heads(model, theta, W_K, scale=scale)
    x = signs(16, d)
    assert (block(x) - model.predict(theta, x)).abs().max() <= 1e-12
    assert (block.theta() - theta).abs().max() <= 1e-12


def test_cls_attention_row_is_gamma() -> None:
    model, theta = setup(10, 6, 3)
    block = ClsTransformer.from_query_heads(model, theta, random_orthogonal(3, E, 3, 6))
    heads, attn = block.attend(block.embed(signs(8, 10)))
    assert torch.all(attn[..., 0] == 0)  # CLS never attends to itself
    gamma = model.weights(theta)
    assert (attn[..., 1:] - gamma[:, None]).abs().max() <= 1e-14
    assert (block.weights() - gamma).abs().max() <= 1e-14
    x = signs(8, 10)
    assert (heads.shape, block(x).shape) == ((E, 8, 3), (E, 8))


def wide_block(seed: int = 0) -> tuple[ClsTransformer, QueryHeads, torch.Tensor]:
    """Content width 3 and CLS width 2 with random unit directions, random orthogonal keys."""
    model, theta = setup(8, 5, 2, seed)
    block = ClsTransformer.from_query_heads(
        model,
        theta,
        random_orthogonal(seed, E, 2, 5),
        e_content=unit_random(3, 1),
        e_cls=unit_random(2, 2),
    )
    return block, model, theta


def test_masked_inputs_do_not_matter() -> None:
    block, model, theta = wide_block()
    x = signs(16, 8)
    tokens = block.embed(x)
    reference = block.attend(tokens)[0]
    noisy = tokens.clone()
    g = torch.Generator().manual_seed(7)
    noisy[:, :, 0, : block.cls.start] += torch.randn(
        noisy[:, :, 0, : block.cls.start].shape, generator=g, dtype=torch.float64
    )
    noisy[:, :, 1:, block.cls] += torch.randn(
        noisy[:, :, 1:, block.cls].shape, generator=g, dtype=torch.float64
    )
    assert (block.attend(noisy)[0] - reference).abs().max() <= 1e-14
    # keys ignore the content: the CLS attention row is the same for every input
    attn = block.attend(tokens)[1]
    assert (attn - attn[:, :1]).abs().max() == 0
    assert (block(x) - model.predict(theta, x)).abs().max() <= 1e-12


def test_masked_weights_do_not_matter_and_get_no_gradient() -> None:
    block, _, _ = wide_block()
    x = signs(16, 8)
    reference = block(x).detach()
    g = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for w, mask in (
            (block.W_Q, block.q_mask),
            (block.W_K, block.k_mask),
            (block.W_V, block.v_mask),
        ):
            w += (1 - mask) * torch.randn(w.shape, generator=g, dtype=torch.float64)
    assert (block(x) - reference).abs().max() <= 1e-14
    (block(x) ** 2).sum().backward()
    for w, mask in (
        (block.W_Q, block.q_mask),
        (block.W_K, block.k_mask),
        (block.W_V, block.v_mask),
    ):
        assert torch.all(w.grad * (1 - mask) == 0)
        assert (w.grad * mask).abs().max() > 1e-6


def population(task: SparseParity, model: QueryHeads, support: torch.Tensor):
    corr = label_correlation(model, task)
    return lambda block: population_loss(block.weights(), support, corr)


def cube_mse(task: SparseParity, support: torch.Tensor):
    x = cube(task.d).expand(E, 2**task.d, task.d)
    y = task.labels(x, support)
    return lambda block: ((block(x) - y) ** 2).mean(dim=1)


def relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).detach().norm() / b.detach().norm())


@pytest.mark.parametrize("heads", [2, 3])
@pytest.mark.parametrize("loss", ["population", "cube"])
@pytest.mark.parametrize("orthogonal", [False, True])
def test_query_step_matches_query_vector_step(heads: int, loss: str, orthogonal: bool) -> None:
    d, m, eta = 7, 6, 50.0
    model, theta = setup(d, m, heads)
    task = SparseParity(d, k=heads)
    support = task.supports(0, E)
    W_K = random_orthogonal(4, E, heads, m) if orthogonal else None
    block = ClsTransformer.from_query_heads(model, theta, W_K)
    objective = (
        population(task, model, support) if loss == "population" else cube_mse(task, support)
    )
    expected, expected_loss = gradient_step(population_objective(model, task, support), theta, eta)
    before = block.query_step(objective, eta)
    assert relative(before, expected_loss) <= 1e-12
    assert relative(block.theta() - theta, expected - theta) <= 1e-10
    assert relative(block.theta(), expected) <= 1e-12
    x = signs(32, d)
    assert (block(x) - model.predict(expected, x)).abs().max() <= 1e-10
    assert block.W_K.grad is None and block.W_V.grad is None  # keys and values stay frozen


@pytest.mark.parametrize("heads", [2, 3])
def test_non_orthogonal_keys_precondition_the_step(heads: int) -> None:
    d, m, eta = 7, 6, 50.0
    model, theta = setup(d, m, heads)
    task = SparseParity(d, k=heads)
    support = task.supports(0, E)
    K = non_orthogonal(heads, m)
    block = ClsTransformer.from_query_heads(model, theta, K)
    _, grad = population_objective(model, task, support)(theta)
    block.query_step(population(task, model, support), eta)
    induced = -eta * (K.transpose(-1, -2) @ K @ grad[..., None])[..., 0]
    assert relative(block.theta() - theta, induced) <= 1e-10
    plain, _ = gradient_step(population_objective(model, task, support), theta, eta)
    assert relative(block.theta() - theta, plain - theta) > 0.1  # not the query-vector step


def test_refuses_non_softmax_and_bad_scale() -> None:
    model, theta = setup(6, 4, 2)
    with pytest.raises(ValueError, match="softmax only"):
        ClsTransformer.from_query_heads(QueryHeads(model.V, "linear"), theta)
    with pytest.raises(ValueError, match="scale"):
        ClsTransformer.from_query_heads(model, theta, scale=0.0)
