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

from jobs.base import ConfigError, Job
from udfs.url_models.evaluation import format_report
from udfs.url_models.training import (
    add_training_arguments,
    check_training_arguments,
    config_from_args,
    load_url2lang_examples,
    split_by_host,
    train_model,
    write_model_dir,
)


class TrainUrl2LangJob(Job):
    name = "train-url2lang"
    description = "train the language-from-URL model (n-gram or transformer) on the urls table"
    uses_spark = False
    root_required = False

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--urls", required=True, metavar="PATH_OR_ROOT",
                            help="the urls table (Parquet file or folder) or a dataset root holding urls/")
        parser.add_argument("--cap-per-language", type=int, default=600_000,
                            help="most URLs kept per language (smallest seeded URL hash wins)")
        parser.add_argument("--unknown-from-null", action="store_true",
                            help="train an 'unk' class from URLs whose CDX language is null (else they are skipped)")
        add_training_arguments(parser)

    def validate_arguments(self, args: argparse.Namespace) -> None:
        if not args.root:
            args.root = args.out
        super().validate_arguments(args)
        problems = check_training_arguments(args)
        if args.cap_per_language < 1:
            problems.append("--cap-per-language must be at least 1")
        if problems:
            raise ConfigError("; ".join(problems))

    def process(self) -> None:
        args = self.args
        frame, counts = load_url2lang_examples(args.urls, args.cap_per_language, args.unknown_from_null, args.seed)
        self.report.input("urls", counts.pop("input", 0))
        self.report.add_counts({key.split(":", 1)[-1]: value for key, value in counts.items() if ":" in key},
                               bad_reasons=("no_url", "no_host"))
        self.report.kept(counts["kept"])
        if frame["lang"].nunique() < 2:
            raise ConfigError(f"--urls {args.urls}: need URLs of at least two languages, found "
                              f"{sorted(frame['lang'].unique())}")
        frame["split"] = split_by_host(frame["host"], args.dev_fraction, args.test_fraction, args.seed).to_numpy()
        result = train_model("url2lang", frame, config_from_args(args),
                             {"source": args.urls, "cap_per_language": args.cap_per_language,
                              "unknown_from_null": args.unknown_from_null})
        path = write_model_dir(result, args.out)
        for split in ("dev", "test"):
            print(format_report(result.metrics[split], title=f"url2lang {split} (held-out hosts)"))
            self.report.metric(f"{split}_macro_f1", result.metrics[split]["macro"]["f1"])
            self.report.metric(f"{split}_accuracy", result.metrics[split]["accuracy"])
        self.report.metric("languages", len(result.metadata["labels"]))
        self.report.metric("rows_by_split", result.metrics["rows"])
        self.report.metric("model_dir", path)
        self.report.metric("model_version", result.metadata["model_version"])


if __name__ == "__main__":
    TrainUrl2LangJob().run()
