"""train-url2lang: a language-from-URL model from the urls table (label = the CDX CLD2 language).

    parascout train-url2lang --urls out/demo --out models/url2lang [--backend ngram|transformer]
        [--base-model xlm-roberta-base] [--cap-per-language 600000] [--unknown-from-null]

No Spark: the urls table is read with pyarrow, batch by batch, keeping at most
--cap-per-language URLs per language (the paper's 600,000). Rows split train/dev/test
by registered domain (no site crosses splits). Writes a versioned model directory
(weights, tokenizer or n-gram config, labels, parascout_model.json, metrics.json) and
the report under --out/_reports/.
"""
from __future__ import annotations

import argparse

from parascout.jobs.errors import ConfigError
from parascout.jobs.training_job import TrainingJob
from parascout.udfs.rank.url_models.training_data import load_url2lang_examples, split_by_host


class TrainUrl2LangJob(TrainingJob):
    name = "train-url2lang"
    makes = ("lang_model",)
    description = "train the language-from-URL model (n-gram or transformer) on the urls table"
    task = "url2lang"
    input_paths = ("urls",)

    def add_source_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--urls", required=True, metavar="PATH_OR_ROOT",
                            help="the urls table (Parquet file or folder) or a dataset root holding urls/")
        parser.add_argument("--cap-per-language", type=int, default=600_000,
                            help="most URLs kept per language (smallest seeded URL hash wins)")
        parser.add_argument("--unknown-from-null", action="store_true",
                            help="train an 'unk' class from URLs whose CDX language is null (else they are skipped)")

    def source_problems(self, args: argparse.Namespace) -> list[str]:
        return ["--cap-per-language must be at least 1"] if args.cap_per_language < 1 else []

    def examples(self):
        args = self.args
        frame, counts = load_url2lang_examples(args.urls, args.cap_per_language, args.unknown_from_null, args.seed)
        self.count_input("urls", counts)
        if frame["lang"].nunique() < 2:
            raise ConfigError(f"--urls {args.urls}: need URLs of at least two languages, found "
                              f"{sorted(frame['lang'].unique())}")
        frame["split"] = split_by_host(frame["host"], args.dev_fraction, args.test_fraction, args.seed,
                                      rows=frame["url"]).to_numpy()
        return frame, {"source": args.urls, "cap_per_language": args.cap_per_language,
                       "unknown_from_null": args.unknown_from_null}

    def report_result(self, result) -> None:
        for split in ("dev", "test"):
            self.report.metric(f"{split}_accuracy", result.metrics[split]["accuracy"])
        self.report.metric("languages", len(result.metadata["labels"]))
        self.report.metric("rows_by_split", result.metrics["rows"])


if __name__ == "__main__":
    TrainUrl2LangJob().run()
