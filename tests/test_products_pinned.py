"""The products' law and its loss (``exact.products``): every caller's outputs pinned on fixed
seeds, captured from the code before the draws and the loss moved into one module. Exact
equality, except the population steps' recorded losses (to 1e-12: their sum over the tokens
now runs subset first, then the rest) and the law solver's thresholds (to 1e-12: the bulk's
moments now come from a table, ``exact.family_law.table_log_moments``); the law's losses and
``converge``'s ratios to 1e-12 as well (``pinned_support``: another CPU rounds their ``exp``
differently)."""

from __future__ import annotations

import numpy as np
import pytest

from attnsep.exact.family import best_family_loss
from attnsep.exact.family_law import law_draw, law_losses
from attnsep.experiments.select_common import family_loss_at
from attnsep.train import selection_threshold as sel
from attnsep.train.selection import SelectionTrainConfig, train
from attnsep.train.stopping import Stopping
from pinned_support import matches

PINNED = {
    "at": (0.45365338085267953, 0.031523327633556995),
    "conv": [
        (
            [0.527575807061342, 0.5706790139519066],
            [0.0437919262072565, 0.03893035307469668],
            [60, 40],
            ["cap", "near-best"],
        ),
        (
            [0.7722587469076005, 0.771146901472838],
            [0.024035075089627354, 0.02182056899638209],
            [10, 10],
            ["near-best", "near-best"],
        ),
    ],
    "fam": {
        (9, 3, 1, 1, "sphere", 32, 2, True): (
            0.43962972275168233,
            0.19849532618840265,
            0.00583086369731265,
        ),
        (12, 2, 4, 3, "gaussian", 64, 5, False): (
            1.291809785305829,
            0.9229469534886472,
            0.034354263693811546,
        ),
        (12, 2, 4, 3, "sphere", 64, 5, False): (
            2.7056462868174247,
            0.6923631765407912,
            0.06246959264323939,
        ),
        (40, 2, 6, 2, "sphere", 48, 1, True): (
            4.0842653757747245,
            0.6247974635034724,
            0.045409157866644394,
        ),
    },
    "law": [
        0.9426231471511005,
        0.9878108694996293,
        0.9472564739340256,
        0.985211504521056,
        0.9167258166771948,
        0.9264556967773004,
        0.8509137938903442,
        0.9848108179348961,
        0.9610054975240736,
        0.9797280409840667,
        0.9724519552482038,
        0.9200339917120383,
        0.9668061986882398,
        0.9666407814236344,
        0.9463548108408548,
        0.9688658036043841,
    ],
    "pop": [
        (
            10,
            [
                (
                    2,
                    [0.7370239583337135, 0.7723258873542528, 0.8020012225525508],
                    [1.2108156907037588, 1.2603912912689519, 1.4277480160915303],
                ),
                (
                    4,
                    [0.6146316957478756, 0.532137411166452, 0.5009960992085883],
                    [2.920693638899431, 2.470386140026598, 3.16115469746238],
                ),
                (
                    8,
                    [0.3179118973264647, 0.2365487672862494, 0.17436558718043685],
                    [5.231248632335084, 6.661653818448785, 6.5231582953346585],
                ),
                (
                    9,
                    [0.2681965791213109, 0.15514570812983014, 0.1346095881028069],
                    [4.268060773159019, 4.277794302867092, 5.48183725795428],
                ),
                (
                    10,
                    [0.11196673067688728, 0.10926451290715737, 0.0672329178804402],
                    [6.46981319444317, 5.589905060900685, 7.192530804390018],
                ),
                (
                    12,
                    [0.10390232429189096, 0.10394246519555139, 0.1318971771339289],
                    [8.985410402432503, 9.188292443459734, 10.760887284321731],
                ),
                (
                    16,
                    [0.125, 1.4472968075058663e-27, 0.007351143355727243],
                    [999.9999400467202, 310.20267153409065, 17.027239279639005],
                ),
            ],
        ),
        (
            None,
            [
                (
                    2,
                    [0.9896931534281923, 0.992730022893325],
                    [1.4091904057799882, 1.2975591124860628],
                ),
                (
                    4,
                    [0.9796312236018508, 0.9677716087629616],
                    [4.475419076466107, 2.8675580034905406],
                ),
                (
                    8,
                    [0.8635519104655844, 0.8902314925171938],
                    [6.106973485217579, 4.484621670170764],
                ),
                (
                    16,
                    [0.3882373599474756, 0.4042902150610717],
                    [11.33333820953967, 13.978778582886568],
                ),
            ],
        ),
    ],
    "trn": [
        (
            [
                1.1666666666666667,
                1.1666666666666667,
                1.0819560563456618,
                0.9938890806756778,
                1.0328370253785306,
                0.9847105508509078,
                1.0033695481543634,
                0.8491024751493212,
            ],
            8.530124520710899,
        ),
        (
            [
                1.1666666666666667,
                1.1666666666666667,
                1.0124926076770855,
                0.9279375352695567,
                0.9299261489200388,
                0.9510097154410461,
                0.8822131484710432,
                0.8773375134855164,
            ],
            7.784335188045154,
        ),
        (
            [
                1.1666666666666667,
                1.1666666666666667,
                1.10294855057395,
                1.0451831811940573,
                0.9996436743482772,
                0.8580118023404568,
                1.0512728571061585,
                0.965249367839148,
            ],
            1.3641252066893448,
        ),
        (
            [
                1.1666666666666667,
                1.1666666666666667,
                1.04839475848828,
                1.1430427583075853,
                1.0571939944317998,
                0.9548392299054627,
                0.9594586134938683,
                1.0195092635480596,
            ],
            3.431037435164722,
        ),
    ],
}


FAMILY = [
    (12, 2, 4, 3, "sphere", 64, 5, False),
    (12, 2, 4, 3, "gaussian", 64, 5, False),
    (9, 3, 1, 1, "sphere", 32, 2, True),
    (40, 2, 6, 2, "sphere", 48, 1, True),
]


@pytest.mark.parametrize("args", FAMILY)
def test_best_family_loss_is_pinned(args: tuple) -> None:
    b = best_family_loss(*args)
    assert (b.alpha, b.loss, b.stderr) == PINNED["fam"][args]


def test_family_loss_at_is_pinned() -> None:
    assert family_loss_at(1.7, 10, 2, 5, 2, 40, 3) == PINNED["at"]


def test_law_losses_are_pinned() -> None:
    draw = law_draw(400, 2, 8, 16, np.random.default_rng(3))
    assert matches(law_losses(2.5, draw, 2).tolist(), PINNED["law"])


@pytest.mark.parametrize(("index", "T", "by_law"), [(0, 8, False), (1, 300, True)])
def test_population_threshold_is_pinned(index: int, T: int, by_law: bool) -> None:
    replicas = 2 if by_law else 3
    r = sel.population_threshold(T, 2, 1, replicas, seed=4, samples=32, m_limit=16, by_law=by_law)
    m_star, probes = PINNED["pop"][index]
    assert r["m_star"] == m_star and [p["size"] for p in r["probes"]] == [p[0] for p in probes]
    for p, (_, ratios, alphas) in zip(r["probes"], probes, strict=True):
        # by law, the bulk's moments are interpolated from a table: equal to rounding (1e-12)
        assert p["ratios"] == pytest.approx(ratios, rel=1e-12, abs=0)
        assert p["alphas"] == pytest.approx(alphas, rel=1e-12, abs=0)


def test_converge_is_pinned() -> None:
    sphere = sel.Training(
        batch=16, eval_size=64, stopping=Stopping(chunk=10, max_steps=60, monitor=32)
    )
    gaussian = sel.Training(
        batch=16,
        eval_size=64,
        kind="gaussian",
        stopping=Stopping(chunk=10, max_steps=40, monitor=32),
    )
    got = [sel.converge(8, 2, 4, 2, 2, 3, sphere), sel.converge(8, 2, 3, 1, 2, 3, gaussian)]
    assert matches([(c.ratios, c.stderrs, c.steps, c.rules) for c in got], PINNED["conv"])


@pytest.mark.parametrize(
    ("index", "kind", "m"),
    [(0, "sphere", 5), (1, "gaussian", 4), (2, "sphere", 1), (3, "sphere", 2)],
)
def test_population_steps_are_pinned(index: int, kind: str, m: int) -> None:
    config = SelectionTrainConfig(
        d=3,
        T=9,
        q=2,
        pe_dim=m,
        pe_kind=kind,
        trainable="position",
        objective="population",
        steps=4,
        batch=8,
        lr=2.0,
        seeds=2,
        seed=6,
    )
    result = train(config)
    losses, weight = PINNED["trn"][index]
    assert float(result.W.abs().sum()) == weight
    assert result.losses.flatten().tolist() == pytest.approx(losses, rel=1e-12, abs=0)
