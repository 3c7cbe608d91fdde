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
# # One gradient step on sparse XOR
#
# The label is `y = -x_i* x_j*` on `x ∈ {±1}^d`. The model has two attention heads over
# frozen random position embeddings `V` (`d x m`); each head's only trainable parameter is
# its query vector `θ_h` (SPEC A2), so the model has `2m` parameters. We take **one** population
# gradient step from the anti-symmetric initialization (SPEC A5) for an ensemble of
# independent replicas, then look at what each head attends to.
#
# A replica *succeeds* when its certified error, a bound on `|f(x) - y|` over all `2^d`
# inputs (SPEC A6), is at most 0.1.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import attnsep

d, m, seeds = 1024, 32, 64

# %% [markdown]
# ## Softmax attention: one step is enough
#
# `keep_embeddings=True` keeps `V`, so that the result can give the attention weights
# `γ_h = softmax(V θ_h)` after the step.

# %%
softmax = attnsep.xor_one_step(d=d, m=m, seeds=seeds, seed=0, keep_embeddings=True)
summary = softmax.summary()
print(f"trainable parameters: {summary['trainable_params']}, step size eta = {summary['eta']:.3g}")
print(f"success rate {summary['success_rate']:.3f}")
print(f"specialization rate {summary['specialization_rate']:.3f}")

# %% [markdown]
# ## The same step with linear attention
#
# Same replicas (same seed: same embeddings, supports and initialization), only the
# attention map changes to `γ = Vθ / d`.

# %%
linear = attnsep.xor_one_step(
    d=d, m=m, seeds=seeds, seed=0, attention="linear", keep_embeddings=True
)
columns = {
    "success_rate": "success",
    "specialization_rate": "specialized",
    "collapse_rate": "collapsed",
}
table = pd.DataFrame(
    {
        name: {label: run.summary()[key] for key, label in columns.items()}
        for name, run in [("softmax", softmax), ("linear", linear)]
    }
).T
table["loss (median)"] = [run.summary()["loss_after_median"] for run in (softmax, linear)]
print(table.to_string(float_format="{:.3f}".format))

# %% [markdown]
# ## What the heads attend to
#
# Replica 0's two heads after the step, over all `d` positions; the dashed lines mark the
# support `{i*, j*}`. With softmax each head puts its weight on a different support bit.
# Linear attention keeps `γ_2 = -γ_1` (the initialization is anti-symmetric and the step is
# linear in `θ`), so the two heads read the same position with opposite signs: they collapse.

# %%
replica = 0
support = softmax.raw.support[replica]
fig, axes = plt.subplots(2, 2, figsize=(10, 5), sharex=True, constrained_layout=True)
for column, (name, run) in enumerate([("softmax", softmax), ("linear", linear)]):
    gamma = run.attention()[replica]
    for head in range(2):
        ax = axes[head, column]
        ax.plot(np.arange(d), gamma[head], lw=0.8)
        for position in support:
            ax.axvline(position, color="grey", ls="--", lw=0.8)
        ax.set_title(f"{name}, head {head + 1}")
        ax.set_ylabel("weight γ")
for ax in axes[1]:
    ax.set_xlabel("position")

# %% [markdown]
# ## Per replica
#
# `to_frame()` gives one row per replica; the certified errors separate the successes
# (near 0) from the failures.

# %%
frame = softmax.to_frame()
print(frame[["support_0", "support_1", "loss_after", "certified_error", "success"]].head())
fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
errors = {
    name: run.to_frame()["certified_error"]
    for name, run in [("softmax", softmax), ("linear", linear)]
}
ax.hist([np.log10(np.maximum(v, 1e-12)) for v in errors.values()], bins=30, label=list(errors))
ax.axvline(np.log10(0.1), color="grey", ls="--", lw=0.8)
ax.set_xlabel("log10 certified error (dashed: success threshold 0.1)")
ax.set_ylabel("replicas")
ax.legend()
