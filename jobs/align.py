"""`parascout align`: 1-1 URL alignment per host from a `lang<TAB>url` list, without Spark.

Methods: strand (equal STRAND handles, optionally with learned host markers), wmt16
(the WMT16 shared task's language-id stripper, udfs/rank/wmt16_baseline.py) and model
(all src×trg pairs of a host scored by the URL pair model, × the language model's
probabilities when given). Every method ends with the same greedy best-first 1-1 over the
pairs scoring at least --min-score: for the model, by default the cut-off its training chose on
its own dev hosts with orphaned pages (parascout_model.json `decision.min_score`; 0.5 for a model
without one), so a page whose partner is not in the list stays unaligned; strand and wmt16 keep
every candidate (a candidate is their decision).
Writes `score<TAB>src_url<TAB>trg_url` and a report (under --root, else OUTPUT.report.json).
Each input line ends as: ok (aligned), lost_in_one_to_one, below_min_score (every candidate
scored under the cut-off), no_candidate, duplicate_url, other_language, blank_line (filtered) or
undecodable_line / malformed_line / empty_url / url_too_long / unparsable_url (bad).
"""
from __future__ import annotations

import gzip
import json
import os
from collections import Counter

import pandas as pd

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.udfs.common import storage
from parascout.udfs.common.langs import UnknownLanguage, to_iso639_3
from parascout.udfs.common.urls import url_host
from parascout.udfs.rank import alignment, handles
from parascout.udfs.rank.wmt16_baseline import wmt16_candidates

BAD_LINE_REASONS = ("undecodable_line", "malformed_line", *handles.BAD_URL_REASONS)
FILTERED_REASONS = frozenset({"blank_line", "other_language", "duplicate_url", "lost_in_one_to_one", "below_min_score",
                              "no_candidate"})
#: cut-off of a pair model that records no decision (trained before calibration existed)
UNCALIBRATED_MIN_SCORE = 0.5


class AlignJob(Job):
    name = "align"
    description = "1-1 URL alignment per host from a lang<TAB>url list (strand | wmt16 | model); no Spark"
    input_paths = ("input", "lss_conf")
    model_paths = ("pair_model", "lang_model")
    uses_spark = False
    root_required = False

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("input", help="TSV lines `lang<TAB>url` (local file, .gz allowed)")
        parser.add_argument("output", help="TSV lines `score<TAB>src_url<TAB>trg_url` to write")
        parser.add_argument("--src-lang", required=True, help="source language (ISO 639-1 or 639-3)")
        parser.add_argument("--trg-lang", required=True, help="target language (ISO 639-1 or 639-3)")
        parser.add_argument("--method", choices=("strand", "wmt16", "model"), default="strand",
                            help="strand: STRAND handles; wmt16: the WMT16 shared task baseline; model: the URL pair model")
        parser.add_argument("--max-bucket", type=int, default=50, help="strand: URLs per language per bucket")
        parser.add_argument("--lss-conf", action="append", default=[], metavar="YAML", help="strand: extra LSS YAML")
        handles.add_learned_lss_arguments(parser)
        parser.add_argument("--pair-model", help="model: directory of the URL pair model (udfs.rank.url_models)")
        parser.add_argument("--lang-model", help="model: directory of the URL language model (optional; off by "
                            "default: the input gives the languages, and multiplying by P(language) lowered F1 on "
                            "WMT16 with orphans from 0.943 to 0.840)")
        parser.add_argument("--min-score", type=float, default=None,
                            help="align only pairs scoring at least this (default: the pair model's calibrated "
                                 f"cut-off, {UNCALIBRATED_MIN_SCORE} for a model without one; no cut-off for "
                                 "strand and wmt16)")
        parser.add_argument("--max-pairs-per-host", type=int, default=250_000,
                            help="model: hosts with more src×trg pairs are blocked by token Jaccard")
        parser.add_argument("--block-top-k", type=int, default=20, help="model: pairs kept per URL when blocking")
        parser.add_argument("--batch-size", type=int, default=4096, help="model: URL pairs scored per batch")

    def validate_arguments(self, args):
        super().validate_arguments(args)
        try:
            self.src_lang, self.trg_lang = to_iso639_3(args.src_lang), to_iso639_3(args.trg_lang)
        except UnknownLanguage as error:
            raise ConfigError(str(error)) from error
        if self.src_lang == self.trg_lang:
            raise ConfigError("--src-lang and --trg-lang must differ")
        if not os.path.exists(args.input):
            raise ConfigError(f"align: input {args.input} not found")
        if args.method == "model" and not args.pair_model:
            raise ConfigError("--method model needs --pair-model DIR (a model from `parascout train-pairs`)")
        for path in (args.pair_model, args.lang_model, *args.lss_conf):
            if path and not os.path.exists(path):
                raise ConfigError(f"align: {path} not found")
        if args.max_bucket < 1 or args.block_top_k < 1 or args.max_pairs_per_host < 1:
            raise ConfigError("--max-bucket, --block-top-k and --max-pairs-per-host must be at least 1")

    def report_path(self) -> str:
        return super().report_path() if self.args.root else f"{self.args.output}.report.json"

    def already_done(self) -> dict | None:
        return super().already_done() if os.path.exists(self.args.output) else None

    def _write_report(self, data: dict) -> None:
        storage.write_text(self.report_path(), json.dumps(data, indent=2, default=str))

    def process(self):
        counts: Counter = Counter()
        pool = self.read_pool(counts)
        self.log.info("%d URLs in %s/%s on %d hosts; method %s", len(pool), self.src_lang, self.trg_lang,
                      pool["host"].nunique(), self.args.method)
        pairs = self.candidates(pool)
        min_score = self.min_score()
        eligible = pairs[pairs["score"] >= min_score]
        aligned = alignment.greedy_one_to_one(eligible).sort_values(["host", "score", "src_url"],
                                                                    ascending=[True, False, True], kind="stable")
        self.report.metric("pairs_aligned", len(aligned))
        self.report.metric("hosts_aligned", int(aligned["host"].nunique()))
        self.report.metric("candidate_pairs_below_min_score", len(pairs) - len(eligible))
        in_pairs = set(aligned["src_url"]) | set(aligned["trg_url"])
        in_eligible = set(eligible["src_url"]) | set(eligible["trg_url"])
        in_candidates = set(pairs["src_url"]) | set(pairs["trg_url"])
        for url in pool["url"]:
            counts["ok" if url in in_pairs else "lost_in_one_to_one" if url in in_eligible
                   else "below_min_score" if url in in_candidates else "no_candidate"] += 1
        self.report.metric("urls_left_unaligned", len(pool) - counts["ok"])
        self.report.add_counts(dict(counts), bad_reasons=BAD_LINE_REASONS, filtered_reasons=FILTERED_REASONS)
        lines = [f"{score:.6f}\t{src}\t{trg}\n" for score, src, trg in
                 zip(aligned["score"], aligned["src_url"], aligned["trg_url"])]
        storage.write_text(self.args.output, "".join(lines))
        self.report.output(self.args.output, len(lines))
        self.log.info("wrote %d pairs to %s", len(lines), self.args.output)

    def min_score(self) -> float:
        """--min-score, else the pair model's calibrated cut-off (model), else none; reported with its source."""
        if self.args.min_score is not None:
            value, source = self.args.min_score, "--min-score"
        elif self.args.method != "model":
            value, source = float("-inf"), "none (every candidate of this method is a decision)"
        else:
            from parascout.udfs.rank.url_models import read_metadata

            decision = read_metadata(self.args.pair_model).get("decision") or {}
            value = decision.get("min_score", UNCALIBRATED_MIN_SCORE)
            source = (f"pair model decision ({decision.get('chosen_on')})" if "min_score" in decision
                      else "default for a pair model without a calibrated decision")
        self.report.metric("min_score", {"value": value if value > float("-inf") else None, "source": source})
        return value

    def read_pool(self, counts: Counter) -> pd.DataFrame:
        """The URLs of the two languages (host, url, lang), each line's fate counted in `counts`."""
        opener = gzip.open if self.args.input.endswith(".gz") else open
        known: dict[str, str | None] = {}
        rows, seen, n_lines = [], set(), 0
        with opener(self.args.input, "rb") as handle:
            for raw in handle:
                n_lines += 1
                reason, lang, url = self.parse_line(raw, known)
                if reason is None and url in seen:
                    reason = "duplicate_url"
                if reason:
                    counts[reason] += 1
                    continue
                seen.add(url)
                rows.append((url_host(url), url, lang))
        self.report.input("lines", n_lines)
        pool = pd.DataFrame(rows, columns=["host", "url", "lang"])
        flags = Counter(flag for url in pool["url"] for flag in handles.url_flags(url))
        self.report.metric("url_flags", {"idn_host": flags["idn_host"], "percent_encoded": flags["percent_encoded"]})
        return pool

    def parse_line(self, raw: bytes, known: dict) -> tuple[str | None, str | None, str | None]:
        """(reason or None, ISO 639-3 language, URL) of one input line."""
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            return "undecodable_line", None, None
        if not text.strip():
            return "blank_line", None, None
        parts = text.split("\t")
        if len(parts) != 2:
            return "malformed_line", None, None
        code, url = parts[0].strip(), parts[1].strip()
        if code not in known:
            try:
                known[code] = to_iso639_3(code)
            except UnknownLanguage:
                known[code] = None
        if known[code] not in (self.src_lang, self.trg_lang):
            return "other_language", None, None
        return handles.url_problem(url), known[code], url

    def candidates(self, pool: pd.DataFrame) -> pd.DataFrame:
        """Scored candidate pairs (host, src_url, trg_url, score) of the chosen method."""
        args, src, trg = self.args, self.src_lang, self.trg_lang
        if args.method == "wmt16":
            pairs = wmt16_candidates(pool, src, trg)
            self.report.metric("pairs_by_stage", {str(k): int(v) for k, v in pairs["stage"].value_counts().items()})
        elif args.method == "strand":
            stripper = handles.build_stripper((src, trg), tuple(args.lss_conf))
            pairs, stats, learned = handles.strand_candidates(
                pool, stripper, src, trg, args.max_bucket, args.learn_lss, args.learn_min_frac,
                args.learn_max_other_frac, args.learn_min_support)
            self.report.metric("strand", stats)
            if args.learn_lss:
                self.report.metric("learned_lss", [f"{r.host} {r.lang} {r.token} (support {r.support})"
                                                   for r in learned.itertuples()][:200])
        else:
            pairs = self.model_pairs(pool)
        self.report.metric("candidate_pairs", len(pairs))
        return pairs[alignment.PAIR_COLUMNS]

    def model_pairs(self, pool: pd.DataFrame) -> pd.DataFrame:
        """All src×trg pairs per host (blocked on huge hosts) scored by the URL models."""
        try:
            from parascout.udfs.rank.url_models import load_model
        except ImportError as error:
            raise ConfigError(f"--method model needs udfs.rank.url_models.load_model ({error})") from error
        args = self.args
        pairs, stats = alignment.model_candidates(pool, self.src_lang, self.trg_lang, args.max_pairs_per_host,
                                                  args.block_top_k)
        self.report.metric("model_candidates", stats)
        pair_model = load_model(args.pair_model)
        lang_model = load_model(args.lang_model) if args.lang_model else None
        self.log.info("scoring %d pairs with %s%s", len(pairs), args.pair_model,
                      f" and {args.lang_model}" if lang_model else "")
        return alignment.score_with_models(pairs, pair_model, lang_model, self.src_lang, self.trg_lang,
                                           args.batch_size)


if __name__ == "__main__":
    AlignJob().run()
