"""bench_fetch_resume's figures: each the median over the rounds of that round's own ratio, so one noisy round
moves none of them."""
from __future__ import annotations

from benchmarks.bench_fetch_resume import figures


def one_round(fixed: float, full: float, killed: float, relaunch: float) -> dict:
    return {"fixed": {"cpu": fixed, "wall": fixed / 2, "gets": 0},
            "full": {"cpu": full, "wall": full / 2, "gets": 40},
            "killed": {"cpu": killed, "wall": killed / 2, "gets": 34},
            "relaunch": {"cpu": relaunch, "wall": relaunch / 2, "gets": 8}}


def test_each_figure_is_the_median_of_the_rounds_own_ratios():
    rounds = [one_round(40, 200, 100, 180), one_round(25, 100, 60, 70), one_round(25, 120, 66, 78)]
    shown = figures(rounds)
    assert shown["relaunch / full"] == "cpu 70.0%, wall 70.0%, GETs 20.0%"  # 90%, 70%, 65%
    # (relaunch - fixed) / (full - fixed): 87.5%, 60%, 55.8%
    assert shown["the relaunch's per-record work (cpu less the fixed cost) / the full run's"] == "60.0%"
    # killed + relaunch - full: 80 (40%), 30 (30%), 24 (20%); a second start of the job: 40, 25, 25
    assert shown["killed + relaunch - full"] == "30.0 cpu-s, 30.0% of a full run (a second start of the job: 25.0 cpu-s)"


def test_one_round_gives_its_own_figures():
    shown = figures([one_round(25, 100, 60, 70)])
    assert shown["relaunch / full"] == "cpu 70.0%, wall 70.0%, GETs 20.0%"
    assert shown["the relaunch's per-record work (cpu less the fixed cost) / the full run's"] == "60.0%"


def test_the_task_threads_ratio_is_shown_when_every_round_measured_it():
    rounds = [one_round(25, 100, 60, 70), one_round(25, 120, 66, 78)]
    for r, (full, relaunch) in zip(rounds, ((40.0, 30.0), (40.0, 34.0))):
        r["full"]["tasks"], r["relaunch"]["tasks"] = full, relaunch
    assert "Spark task threads 80.0%" in figures(rounds)["relaunch / full"]  # 75%, 85%
    rounds[1]["full"]["tasks"] = None  # a round without --task-cpu
    assert "task threads" not in figures(rounds)["relaunch / full"]
