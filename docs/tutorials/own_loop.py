# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Your own training loop
#
# The library trains ensembles of replicas at once (a leading axis `E` on every tensor).
# For your own experiments, `attnsep.models` also has single-model `torch.nn.Module`s that
# fit a plain PyTorch loop: any `torch.optim` optimizer, any loss, any schedule.
#
# * `Selector(d, m_p, trainable)`: the one-layer selector of sparse token selection
#   (SPEC B2), `f, s = selector(X, P, y)`; its parameter is `W` (`D x D`, `D = d + m_p`).
# * `QueryHeadsModel(d, m, heads)`: the query-heads model of sparse XOR (SPEC A2),
#   `model(x)` for `x` of shape `n x d`; its parameter is `theta` (`H x m`).
# * `ClsTransformer`: the same function as a standard attention block (SPEC A3).
#
# Each is the library's ensemble code on a replica axis of 1, so it computes exactly what
# the experiments compute.

# %%
import math

import matplotlib.pyplot as plt
import torch

from attnsep.exact.family import best_family_loss
from attnsep.exact.parity import population_loss
from attnsep.exact.selection import exact_loss
from attnsep.exact.selection_bounds import fcn_loss_floor, uniform_attention_loss
from attnsep.models import ClsTransformer, QueryHeadsModel, Selector
from attnsep.positional_encodings import StochasticPE
from attnsep.tasks.parity import SparseParity
from attnsep.tasks.selection import TokenSelection, sts

torch.set_num_threads(1)  # tiny tensors: one thread is the fastest

# %% [markdown]
# ## Sparse token selection with SGD
#
# `T` Gaussian tokens in `R^d` and a subset `y` of `q` positions; the target is the average
# of the selected tokens (SPEC B1). `TokenSelection.sample` draws a batch and `StochasticPE`
# fresh random unit encodings for every sequence, each from a named random stream (here
# the step number), so the run is reproducible. Only the position block of `W` trains
# (`trainable="position"`: the other entries stay 0), from `W = 0`, by SGD with a linearly
# decaying rate.

# %%
d, T, q, m_p, batch, steps = 4, 8, 2, 32, 64, 300
task = TokenSelection(d, T, q)
encodings = StochasticPE(seed=0, replicas=1, width=m_p)


def train(model: Selector, optimizer: torch.optim.Optimizer) -> list[float]:
    schedule = torch.optim.lr_scheduler.LinearLR(optimizer, 1.0, 0.0, total_iters=steps)
    losses = []
    for step in range(steps):
        data = task.sample(seed=0, replicas=1, batch=batch, key=("train", step))
        X, P, y = data.X[0], encodings.draw(("train", step), batch, T)[0], data.y[0]
        f, _ = model(X, P, y)
        loss = (f - sts(X, y)).pow(2).sum(dim=-1).mean()  # summed over the d coordinates
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    return losses


sgd = Selector(d, m_p, trainable="position")
sgd_losses = train(sgd, torch.optim.SGD(sgd.parameters(), lr=10.0))
for step in range(0, steps + 1, 50):
    window = sgd_losses[max(0, step - 10) : step + 1]
    print(f"step {step:3d}: loss {sum(window) / len(window):.4f}")

# %% [markdown]
# ## Against the closed forms
#
# At `W = 0` attention is uniform and the loss is `L_0 = d (T − q) / (q T)` (SPEC B4). With
# a position-only `W` the logits ignore the tokens, so the loss is exact over the Gaussian
# tokens (SPEC B3, `exact.selection.exact_loss`): we evaluate the trained `W` on 2048 fresh
# `(y, PE)` draws. Two yardsticks: the lower bound that **every** fully-connected network
# with first-layer width `<= Td − 1` obeys (SPEC B4), and the best loss of the family
# `W = αI`, with `α` searched (`exact.family.best_family_loss`).

# %%
held_out = task.sample(seed=0, replicas=1, batch=2048, key=("eval",))
P_eval = encodings.draw(("eval",), 2048, T)


def evaluate(model: Selector) -> str:
    mean, stderr = exact_loss(model.effective().detach()[None], P_eval, held_out.y)
    cosine = model.cosine_to_ground_truth()
    return f"{mean.item():.4f} ± {stderr.item():.4f}, cos(W, W*) {cosine:.3f}"


family = best_family_loss(T, q, m_p, d)
print(f"uniform attention L_0        {float(uniform_attention_loss(T, q, d)):.4f}")
print(f"FCN floor (width <= Td - 1)  {float(fcn_loss_floor(T, q)):.4f}")
print(f"trained selector (SGD)       {evaluate(sgd)}")
print(f"best W = alpha I             {family.loss:.4f} at alpha = {family.alpha:.1f}")
print(f"mean diagonal of W after SGD {sgd.W[d:, d:].diagonal().mean().item():.2f}")

# %% [markdown]
# The selector beats the bound every FCN of that width obeys, with `m_p² = 1024` trainable
# entries; its diagonal is still growing toward the family's best `α` (more steps close
# the gap). Swapping the optimizer is one line: Adam, from the same start on the same
# batches. (The library's own trainer, `train.selection`, keeps SGD: at larger widths
# Adam's per-entry normalization turns the gradient noise on the off-diagonal entries into
# a random walk, see its docstring.)

# %%
adam = Selector(d, m_p, trainable="position")
adam_losses = train(adam, torch.optim.Adam(adam.parameters(), lr=0.1))
print(f"trained selector (Adam)      {evaluate(adam)}")

fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
for name, losses in (("SGD", sgd_losses), ("Adam", adam_losses)):
    ax.plot(torch.tensor(losses).unfold(0, 10, 1).mean(dim=1), label=name)
ax.axhline(float(fcn_loss_floor(T, q)), color="grey", ls="--", lw=0.8, label="FCN floor")
ax.set_yscale("log")
ax.set_xlabel("step")
ax.set_ylabel("training loss (10-step mean)")
ax.legend()

# %% [markdown]
# ## Sparse XOR with plain gradient descent
#
# `x ∈ {±1}^d`, label `y = −x_i* x_j*` (SPEC A1). The model's two heads attend over frozen
# random embeddings `V` (`d x m`, a buffer); `theta` is all that trains. Gradient descent
# runs on the exact population loss of SPEC A4 (`exact.parity.population_loss`, computed
# from the attention weights) with the step size of SPEC A5, `η = 16 d² ln d`: the loss
# falls from about 1 to nearly 0 in one step.

# %%
d, m = 32, 16
xor = SparseParity(d)
support = xor.supports(seed=0, replicas=1)  # 1 x 2: the positions i*, j*
model = QueryHeadsModel(d, m, seed=0)
optimizer = torch.optim.SGD(model.parameters(), lr=16 * d**2 * math.log(d))
for step in range(3):
    loss = population_loss(model.weights()[None], support)[0]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: population loss before it {loss.item():.2e}")
print(f"after: {population_loss(model.weights()[None], support)[0].item():.2e}")
print("support", support[0].tolist(), "heads attend to", model.weights().argmax(dim=1).tolist())

# %% [markdown]
# The module predicts on samples like any network, and the equivalent transformer block
# (SPEC A3, ensemble-first: inputs `E x n x d`) built from it predicts the same.

# %%
x, y = next(xor.samples(seed=1, support=support, n=1000))
x, y = x[0], y[0]
with torch.no_grad():
    f = model(x)
    block = ClsTransformer.from_query_heads(*model.ensemble())
    print(f"max |f(x) - y| over 1000 samples: {(f - y).abs().max().item():.2e}")
    print(f"transformer block vs module: {(block(x[None])[0] - f).abs().max().item():.1e}")
