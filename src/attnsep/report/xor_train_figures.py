"""Figures of a training run (``attnsep xor train --figures DIR``): the loss over steps with a band
over replicas, and each head's attention mass on the support bits over steps (SPEC A6)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..train.xor_train import XorTrajectories

LOSS_FLOOR = 1e-16
"""Losses below this (softmax reaches 0 in float64) are drawn at it on the log axis."""


def loss_band(ax, steps: np.ndarray, values: np.ndarray, label: str) -> None:
    """Median over replicas (rows of ``values``) with the 10-90% band, on a log axis."""
    values = np.maximum(values, LOSS_FLOOR)
    (line,) = ax.plot(steps, np.median(values, axis=0), label=f"{label}: median")
    ax.fill_between(
        steps,
        np.quantile(values, 0.1, axis=0),
        np.quantile(values, 0.9, axis=0),
        color=line.get_color(),
        alpha=0.2,
        label=f"{label}: 10-90% of replicas",
    )
    ax.set_yscale("log")


def assigned_order(mass: np.ndarray) -> np.ndarray:
    """``E x k``: support bits reordered so that bit ``h`` of replica ``e`` is the one head ``h``
    holds most weight on after the last step (the final best assignment, greedily by mass)."""
    final = mass[:, -1]  # E x H x k
    order = np.zeros(final.shape[:2], dtype=int)
    for e, grid in enumerate(final):
        free = list(range(grid.shape[1]))
        for h in np.argsort(-grid.max(axis=1)):
            best = max(free, key=grid[h].__getitem__)
            order[e, h] = best
            free.remove(best)
    return order


def mass_heatmap(ax, fig, mass: np.ndarray) -> None:
    """Rows ``head h -> bit a`` (bits ordered so that ``a = h`` is the head's own bit after
    training), columns steps, colour the median mass over replicas."""
    E, T1, H, k = mass.shape
    order = assigned_order(mass)
    aligned = np.stack([mass[e][:, :, order[e]] for e in range(E)])  # E x T1 x H x k
    rows = np.median(aligned, axis=0).transpose(1, 2, 0).reshape(H * k, T1)
    image = ax.imshow(rows, aspect="auto", interpolation="nearest", vmin=0, vmax=1, cmap="viridis")
    labels = [
        f"head {h + 1} -> {'own bit' if a == h else f'bit {a + 1}'}"
        for h in range(H)
        for a in range(k)
    ]
    ax.set_yticks(range(H * k), labels, fontsize=7)
    ax.set_xlabel("step")
    ax.set_title("median attention mass on the support bits")
    fig.colorbar(image, ax=ax)


def loss_panels(left, right, result: XorTrajectories) -> None:
    """Left: the losses over steps (median and 10-90% band over replicas); right: the share of
    replicas certified (and the median test accuracy, with a cube split)."""
    c = result.config
    title = f"d={c.d}, m={c.m}, k={c.k}, {c.gradient} gradient, {c.optimizer}, {c.seeds} replicas"
    steps = np.arange(result.steps_run + 1)
    loss_band(left, steps, result.population_loss, "population loss")
    if c.gradient != "population":
        loss_band(left, steps, result.loss, "training loss")
    left.set_xlabel("step")
    left.set_ylabel("loss")
    left.set_title(title, fontsize=8)
    left.legend(fontsize=7)
    reached = (result.certified_error <= c.success_tol).mean(axis=0)
    right.plot(steps, reached, label=f"certified error <= {c.success_tol:g}")
    if result.test_accuracy is not None:
        right.plot(steps, np.median(result.test_accuracy, axis=0), label="median test accuracy")
    right.set_ylim(-0.05, 1.05)
    right.set_xlabel("step")
    right.set_ylabel("share of replicas / accuracy")
    right.legend(fontsize=7)


def figures(result: XorTrajectories, out: Path) -> list[Path]:
    """``out/train_loss.png`` and ``out/train_attention.png``."""
    from ..experiments import plotting

    loss_path, mass_path = out / "train_loss.png", out / "train_attention.png"
    with plotting.figure(loss_path, ncols=2) as (_, (left, right)):
        loss_panels(left, right, result)
    with plotting.figure(mass_path, width=7.0) as (fig, (ax,)):
        mass_heatmap(ax, fig, result.mass)
    return [loss_path, mass_path]
