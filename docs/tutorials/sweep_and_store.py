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
# # A sweep, the results store and pandas
#
# Every registered experiment (one per claim, `attnsep.list_experiments()`) has a typed
# config with presets. `attnsep.sweep` runs one over a grid of its config fields; every
# finished job is one row of a SQLite store, and a job already stored is never computed
# again. Here: the one-step success rate of sparse XOR (SPEC A7.1) over the input length `d`
# and the embedding width `m`, in a temporary store.

# %%
import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

import attnsep

attnsep.list_experiments()[["name", "claim", "title"]]

# %% [markdown]
# `attnsep.show("one-step")` (`attnsep show one-step`) lists the config's fields with their
# types, defaults, limits and help, and each preset's values. A single value of a list field
# stands for the list of it: `"d_values": [64, 256]` sweeps `[64]`, then `[256]`.

# %%
store = Path(tempfile.mkdtemp()) / "runs.sqlite"
grid = {"d_values": [64, 256, 1024], "m_values": [4, 8, 16, 32]}
fixed = {"seeds": 32, "series": ["fixed"]}
result = attnsep.sweep("one-step", grid, fixed=fixed, store=store)
print(result.summary())

# %% [markdown]
# Run it again: the same jobs (same content hashes) are served from the store.

# %%
again = attnsep.sweep("one-step", grid, fixed=fixed, store=store)
print(f"computed {again.computed}, from the store {again.cached}")

# %% [markdown]
# ## The store as a DataFrame
#
# `load_runs` gives one row per record, with the job's config flattened into `config.*`
# columns: the table `attnsep runs export --format csv|parquet` writes.

# %%
runs = attnsep.load_runs(store)
print(runs.shape)
runs[["job_id", "d", "m", "seeds", "successes", "rate", "low", "high", "collapse_rate"]]

# %%
fig, ax = plt.subplots(figsize=(6, 3.5), constrained_layout=True)
for d, rows in runs.sort_values("m").groupby("d"):
    ax.errorbar(
        rows["m"],
        rows["rate"],
        yerr=[rows["rate"] - rows["low"], rows["high"] - rows["rate"]],
        marker="o",
        capsize=3,
        label=f"d = {d}",
    )
ax.axhline(0.9, color="grey", ls="--", lw=0.8)
ax.set_xscale("log", base=2)
ax.set_xlabel("embedding width m (2m trainable parameters)")
ax.set_ylabel("one-step success rate (Wilson 95%)")
ax.legend()
# %% [markdown]
# ## An experiment and its verdict
#
# `run_experiment` runs an experiment's jobs for a preset (here with smaller sizes given in
# `config`) into the same kind of store and applies the claim's criterion: the verdict is
# *reproduced*, *not reproduced* or *inconclusive*, with its reason. Few seeds and sizes
# cannot decide the claim, and the verdict says so.

# %%
claim = attnsep.run_experiment(
    "one-step", config={"d_values": [64, 256], "seeds": 16, "m_values": [16]}, store=store
)
print(claim.summary()["verdict"], "-", claim.summary()["reason"])
claim.to_frame()[["series", "d", "m", "rate", "low", "high"]]

# %% [markdown]
# ## Figures and saved results
#
# Every result draws itself (`plot()`: a matplotlib `Figure`; here the experiment's figure,
# as the report draws it) and saves itself into one `.npz` file that `attnsep.load` reads
# back as the same type.

# %%
path = claim.save(store.parent / "claim.npz")
again = attnsep.load(path)
print(repr(again), again.summary() == claim.summary())
again.plot()

# %%
shutil.rmtree(store.parent)  # the temporary store and the saved claim
