"""train-pairs: a parallelness-from-URL-pair model from positive pairs plus synthetic negatives.

    parascout train-pairs --positives ../shared/data/wmt16/train.pairs --out models/pairs
        [--backend ngram|transformer] [--negatives default] [--negatives-per-positive 1]

--positives is a pair file (`src_url trg_url` per line, WMT16 style), the sample archive
(its truth/pairs.parquet), or a verified_pairs table (parallel=false rows are real
negatives). Pairs split train/dev/test by registered domain; each split gets same-host
synthetic negatives (random / jaccard / remove-random-tokens, mono and bi; default the
paper's best: random mono+bi, jaccard mono+bi, remove bi). No Spark. Writes a versioned
model directory and the report under --out/_reports/.
"""
from __future__ import annotations

import argparse
from types import MappingProxyType

from parascout.jobs.errors import ConfigError
from parascout.jobs.training_job import TrainingJob
from parascout.udfs.common.langs import UnknownLanguage, to_iso639_3
from parascout.udfs.rank.url_models.negatives import parse_strategies
from parascout.udfs.rank.url_models.training_data import load_pairs, pair_examples


class TrainPairsJob(TrainingJob):
    name = "train-pairs"
    makes = ("pair_model", "rescore_model")
    path_artifacts = MappingProxyType({"positives": ("truth",)})
    description = "train the URL-pair parallelness model on positive pairs + synthetic negatives"
    task = "pairs"
    input_paths = ("positives",)

    def add_source_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--positives", required=True, metavar="FILE_OR_PARQUET",
                            help="pair file (src trg per line), sample archive root, truth/pairs.parquet "
                                 "or verified_pairs table")
        parser.add_argument("--negatives", default="default",
                            help="comma-separated strategies among random-bi, random-mono, jaccard-bi, "
                                 "jaccard-mono, remove-bi, remove-mono ('default': the paper's best; 'all')")
        parser.add_argument("--negatives-per-positive", type=int, default=1, help="k per positive and strategy")
        parser.add_argument("--src-lang", default=None, help="language of the src column of a pair file (en, eng...)")
        parser.add_argument("--trg-lang", default=None, help="language of the trg column of a pair file")

    def source_problems(self, args: argparse.Namespace) -> list[str]:
        problems = []
        try:
            args.negatives = ",".join(parse_strategies(args.negatives))
        except ValueError as error:
            problems.append(f"--negatives: {error}")
        if args.negatives_per_positive < 1:
            problems.append("--negatives-per-positive must be at least 1")
        for name in ("src_lang", "trg_lang"):
            if getattr(args, name):
                try:
                    setattr(args, name, to_iso639_3(getattr(args, name)))
                except UnknownLanguage as error:
                    problems.append(f"--{name.replace('_', '-')}: {error}")
        return problems

    def examples(self):
        args = self.args
        pairs, counts = load_pairs(args.positives, args.src_lang, args.trg_lang)
        self.count_input("pairs", counts)
        if int(pairs["label"].sum()) < 2:
            raise ConfigError(f"--positives {args.positives}: need at least two positive pairs")
        examples = pair_examples(pairs, tuple(args.negatives.split(",")), args.negatives_per_positive,
                                 args.dev_fraction, args.test_fraction, args.seed)
        return examples, {"source": args.positives, "negatives": args.negatives,
                          "negatives_per_positive": args.negatives_per_positive}

    def report_result(self, result) -> None:
        self.report.metric("examples_by_source", result.metrics["sources"])


if __name__ == "__main__":
    TrainPairsJob().run()
