import json

import pytest

from parascout.jobs.base import ConfigError, Job, JobFailed
from parascout.jobs.cli import discover, main
from tests.conftest import run_job


class CountJob(Job):
    name = "count-test"
    description = "counts a range, dropping odd numbers"
    outputs = ("numbers",)
    default_max_bad_fraction = 0.5

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--n", type=int, default=10)
        parser.add_argument("--bad-every", type=int, default=0)

    def process(self):
        from pyspark.sql import functions as F

        df = self.spark.range(self.args.n).withColumn(
            "reason",
            F.when((F.lit(self.args.bad_every) > 0) & (F.col("id") % F.lit(max(self.args.bad_every, 1)) == 0), "bad_x")
            .when(F.col("id") % 2 == 1, "odd").otherwise("ok"))
        self.report.input("numbers", self.args.n)
        self.report.add_counts(self.count_by(df, "reason"), bad_reasons=("bad_x",))
        self.write_table(df.where("reason = 'ok'"), "numbers")


def test_report_balances_and_is_written(spark, tmp_path):
    report = run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "10"])
    assert report["status"] == "ok" and report["balanced"]
    assert report["kept"] == 5 and report["filtered"] == {"odd": 5}
    assert report["outputs"]["numbers"] == 5
    on_disk = json.loads((tmp_path / "_reports" / "count-test.json").read_text())
    assert on_disk["inputs"] == {"numbers": 10}
    assert not any((tmp_path / "_tmp").iterdir())
    assert spark.read.parquet(str(tmp_path / "numbers")).count() == 5


def test_rerun_with_same_arguments_is_skipped(spark, tmp_path):
    run_job(CountJob, spark, ["--root", str(tmp_path)])
    again = run_job(CountJob, spark, ["--root", str(tmp_path)])
    assert again.get("skipped_rerun") is True
    forced = run_job(CountJob, spark, ["--root", str(tmp_path), "--force"])
    assert "skipped_rerun" not in forced


def test_conf_yaml_sets_defaults_and_cli_wins(spark, tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("spark:\n  spark.sql.shuffle.partitions: '3'\ncount-test:\n  n: 4\n")
    report = run_job(CountJob, spark, ["--root", str(tmp_path / "a"), "--conf", str(conf)])
    assert report["inputs"]["numbers"] == 4
    report = run_job(CountJob, spark, ["--root", str(tmp_path / "b"), "--conf", str(conf), "--n", "6"])
    assert report["inputs"]["numbers"] == 6


def test_bad_conf_fails_at_start(tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("count-test:\n  no_such_option: 1\n")
    with pytest.raises(ConfigError, match="no_such_option"):
        CountJob().run(["--root", str(tmp_path), "--conf", str(conf)])
    with pytest.raises(ConfigError, match="--root"):
        CountJob().run([])


def test_too_much_bad_input_fails_with_a_report(spark, tmp_path):
    with pytest.raises(JobFailed, match="max-bad-fraction"):
        run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "10", "--bad-every", "1"])
    report = json.loads((tmp_path / "_reports" / "count-test.json").read_text())
    assert report["status"] == "failed" and report["bad"] == {"bad_x": 10}


def test_cli_lists_jobs(capsys):
    assert main(["--help"]) == 0
    assert "usage: parascout" in capsys.readouterr().out
    assert main(["no-such-job"]) == 2
    assert all(cls.description for cls in discover().values())
