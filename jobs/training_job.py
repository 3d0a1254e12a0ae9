"""TrainingJob: the skeleton of the jobs that train parascout's URL models (train-url2lang, train-pairs), which
run without Spark and write a model directory."""
from __future__ import annotations

import argparse

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.udfs.common import storage


class TrainingJob(Job):
    """train-url2lang and train-pairs: no Spark, --out doubles as the root, the shared training options.

    A subclass names its `task`, adds and checks its source options (`add_source_arguments`,
    `source_problems`), loads the examples counting every input row (`examples` -> frame and the
    source's metadata) and may add metrics of its own (`report_result`).
    """

    uses_spark = False
    root_required = False
    root_option = False  # --out is where the model directory and its report go
    task = ""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        from parascout.udfs.rank.url_models.training import add_training_arguments

        super().add_arguments(parser)
        self.add_source_arguments(parser)
        add_training_arguments(parser)

    def add_source_arguments(self, parser: argparse.ArgumentParser) -> None:
        raise NotImplementedError

    def lock_path(self) -> str:
        """Beside the model directory: it is replaced whole by a rename, which would take a lock inside with it."""
        parent, _, name = self.args.out.rstrip("/").rpartition("/")
        return storage.join(parent or ".", f".{name}.writer.lock")

    def source_problems(self, args: argparse.Namespace) -> list[str]:
        return []

    def validate_arguments(self, args: argparse.Namespace) -> None:
        from parascout.udfs.rank.url_models.training import check_training_arguments

        if not args.root:
            args.root = args.out
        super().validate_arguments(args)
        problems = check_training_arguments(args) + self.source_problems(args)
        if problems:
            raise ConfigError("; ".join(problems))

    def examples(self):
        """(training frame with a split column, metadata naming the source)."""
        raise NotImplementedError

    def count_input(self, what: str, counts: dict) -> None:
        """Report a loader's counts: input rows, 'bad:<reason>' and 'filtered:<reason>' skips, kept."""
        self.report.input(what, counts.pop("input", 0))
        skips = {key: value for key, value in counts.items() if ":" in key}
        declared = {kind: {key.split(":", 1)[1] for key in skips if key.startswith(f"{kind}:")}
                    for kind in ("bad", "filtered")}
        self.report.add_counts({key.split(":", 1)[1]: value for key, value in skips.items()},
                               bad_reasons=declared["bad"], filtered_reasons=declared["filtered"])
        self.report.kept(counts["kept"])

    def process(self) -> None:
        from parascout.udfs.rank.url_models.model_dir import summary_line, write_model_dir
        from parascout.udfs.rank.url_models.training import config_from_args, train_model

        frame, source = self.examples()
        result = train_model(self.task, frame, config_from_args(self.args), source)
        path = write_model_dir(result, self.args.out)
        print(summary_line(result, path))         # the per-class tables go to the model directory's report.txt
        for split in ("dev", "test"):
            self.report.metric(f"{split}_macro_f1", result.metrics[split]["macro"]["f1"])
        self.report_result(result)
        self.report.metric("model_dir", path)
        self.report.metric("model_version", result.metadata["model_version"])

    def report_result(self, result) -> None:
        """Metrics of the trained model beyond macro-F1 (a subclass's choice)."""

