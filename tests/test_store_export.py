"""The results store as data: one table of records whose columns each hold one type, so that a
store mixing experiments exports to CSV and Parquet (``attnsep runs export``, ``load_runs``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import attnsep
from attnsep.engine.frame import one_kind, records_frame
from attnsep.engine.records import CELL, record_dicts, record_table
from cli_support import attnsep as cli

# ``seeds`` is an integer in the one-step experiment and a list in length-generalization.
ONE_STEP = {"d_values": [16], "seeds": 4, "series": ["fixed"]}
LENGTH = {
    "d": 4,
    "T": 8,
    "q": 2,
    "pe_dim": 8,
    "factors": [1, 2],
    "seeds": [0],
    "pes": ["stochastic"],
    "steps": 10,
    "family_samples": 64,
    "eval_size": 8,
}


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("mixed") / "runs.sqlite"
    attnsep.sweep("one-step", {"m_values": [[4], [6]]}, fixed=ONE_STEP, store=store)
    attnsep.sweep("length-generalization", fixed=LENGTH, store=store)
    return store


def test_mixed_types_export_to_csv_and_parquet(mixed_store: Path, tmp_path: Path) -> None:
    frame = attnsep.load_runs(mixed_store)
    assert set(frame["experiment"]) == {"one-step", "length-generalization"}
    for fmt in ("csv", "parquet"):
        target = tmp_path / f"runs.{fmt}"
        code, _, err = cli(
            "runs", "export", "--format", fmt, "--store", str(mixed_store), "--output", str(target)
        )
        assert code == 0, err
        assert f"{len(frame)} records" in err
    back = pd.read_parquet(tmp_path / "runs.parquet")
    assert list(back.columns) == list(frame.columns) and len(back) == len(frame)
    # the mixed column holds JSON text of each job's own value
    by_experiment = back.groupby("experiment")["config.seeds"].agg(set)
    assert by_experiment["one-step"] == {"4"}
    assert by_experiment["length-generalization"] == {"[0]"}
    # numeric columns stay numeric, in the file as in the frame
    for column in ("loss", "rate", "config.seed"):
        assert pd.api.types.is_numeric_dtype(back[column]), column
        pd.testing.assert_series_equal(back[column], frame[column], check_dtype=False)
    csv = pd.read_csv(tmp_path / "runs.csv")
    assert csv.shape == frame.shape


def test_load_runs_is_the_exported_table(mixed_store: Path) -> None:
    frame = attnsep.load_runs(mixed_store)
    stored = attnsep.load_runs(mixed_store, "one-step")
    assert len(stored) == 2 and set(stored["config.m_values"]) == {"[4]", "[6]"}
    part = frame[frame["experiment"] == "one-step"].dropna(axis=1, how="all")
    assert part["rate"].tolist() == stored["rate"].tolist()
    for value in frame["config.factors"].dropna():
        assert json.loads(value) == [1, 2]


def _row(config: dict, records: list[dict], status: str = "done", job_id: int = 1) -> dict:
    return {
        "id": job_id,
        "experiment": "x",
        "config_hash": f"h{job_id}",
        "config": config,
        "status": status,
        "records": records,
    }


def test_one_kind_per_column() -> None:
    assert one_kind([1, 2.5, None]) == [1, 2.5, None]
    assert one_kind(["a", None, "b"]) == ["a", None, "b"]
    assert one_kind([True, False]) == [True, False]
    assert one_kind([1, True]) == ["1", "true"]  # a boolean is not a number here
    assert one_kind([3, [0, 1]]) == ["3", "[0, 1]"]
    assert one_kind(["a", 1]) == ['"a"', "1"]
    assert one_kind([{"k": 1}, None]) == ['{"k": 1}', None]


def test_records_frame_flattens_configs_and_skips_failed_jobs() -> None:
    rows = [
        _row({"seeds": 4, "pe": "fixed"}, [{"loss": 0.5}, {"loss": 0.25}], job_id=1),
        _row({"seeds": [0, 1]}, [{"loss": 1.0, "path": "exact"}], job_id=2),
        _row({"seeds": 9}, [{"loss": 9.0}], status="failed", job_id=3),
    ]
    frame = records_frame(rows)
    assert list(frame.columns) == [
        "job_id", "experiment", "config_hash", "config.seeds", "config.pe", "loss", "path",
    ]  # fmt: skip
    assert frame["job_id"].tolist() == [1, 1, 2]
    assert frame["config.seeds"].tolist() == ["4", "4", "[0, 1]"]
    assert frame["loss"].tolist() == [0.5, 0.25, 1.0]
    assert frame["config.pe"].isna().tolist() == [False, False, True]
    assert records_frame([]).empty


def test_a_long_value_is_cut_in_the_table_and_whole_in_the_dicts() -> None:
    curve = [{"exponent": e / 2, "steps": [1] * 32} for e in range(29)]  # attention-maps' kind
    frame = records_frame([_row({"seeds": 32}, [{"curve": curve, "loss": 0.5}], job_id=1)])
    header, rows, _ = record_table(frame)
    shown = rows[0][header.index("curve")]
    assert len(shown) == CELL and shown.endswith("…") and json.dumps(curve).startswith(shown[:-1])
    assert json.loads(record_dicts(frame)[0]["curve"]) == curve  # whole


def test_record_table_and_dicts_of_a_sweep(mixed_store: Path) -> None:
    frame = attnsep.load_runs(mixed_store, "one-step")
    header, rows, same = record_table(frame)
    assert header[0] == "job_id" and header[-1] == "config.m_values"  # the varied config field last
    assert "config.d_values" not in header and "experiment" not in header
    assert {"m", "trainable_params"} <= set(header)  # record fields that differ
    assert "d=16" in same and "seeds=4" in same and "d" not in header  # equal in both
    m = header.index("m")
    assert sorted(row[m] for row in rows) == ["4", "6"]  # stored longest first
    header, rows, _ = record_table(frame, limit=1)
    assert len(rows) == 2 and rows[-1][0] == "… 1 more records"
    header, rows, same = record_table(frame.head(1))  # one record: every field shown
    assert {"d", "m", "rate"} <= set(header) and same == ""
    dicts = record_dicts(attnsep.load_runs(mixed_store))
    text = json.dumps(dicts, allow_nan=False)  # missing values are null, not NaN
    assert json.loads(text) == dicts and len(dicts) == len(attnsep.load_runs(mixed_store))
    assert dicts[0]["rate"] == frame["rate"].iloc[0]
