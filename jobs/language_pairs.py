"""Jobs that run once per language pair of `--langs`: the pairs' option, the loop that counts each pair apart
and skips a pair that cannot be processed, and the Spark columns that tell pairs apart."""
from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from parascout.jobs.errors import ConfigError, JobFailed
from parascout.udfs.common.langs import LangPair, pair_label, parse_lang_pair, parse_lang_pairs
from parascout.udfs.common.table_store import PAIR_COLUMN, TableStore

if TYPE_CHECKING:
    from parascout.jobs.report import JobReport


class PairSkipped(Exception):
    """One language pair of the run cannot be processed (no lexicon, no pages of a language): its input is counted
    filtered as `pair_<reason>` and the other pairs go on."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def language_pairs_option(value: str | None) -> list[LangPair]:
    """`--langs en,is`, `en:fr,de` or `en-fr,de-fr` as ISO 639-3 pairs; [] when not given; a ConfigError that
    names the option."""
    if not value:
        return []
    try:
        return parse_lang_pairs(value)
    except ValueError as error:  # UnknownLanguage included
        raise ConfigError(f"--langs {value}: {error}") from error


def language_pair_option(value: str | None) -> tuple[str, str] | None:
    """`--langs en,is` as ISO 639-3 (eng, isl); None when not given; a ConfigError that names the option."""
    if not value:
        return None
    try:
        return parse_lang_pair(value)
    except ValueError as error:  # UnknownLanguage included
        raise ConfigError(f"--langs {value}: {error}") from error


class LanguagePairs:
    """Job's per-pair runs: `pairs` (--langs of a job that runs per language pair) and `pair`, the one being
    processed, whose tables go to lang_pair=<src>-<trg>/ partitions."""

    name: str
    log: logging.Logger
    report: JobReport
    store: TableStore
    spark: Any
    pairs: list[LangPair]
    pair: LangPair | None

    @property
    def pair_partition(self) -> str | None:
        """The label (eng-fra) of the pair being processed, naming its partitions; None outside for_each_pair."""
        return pair_label(self.pair) if self.pair is not None else None

    def for_each_pair(self, work: Callable[[LangPair], None]) -> None:
        """Run `work` for each pair of --langs: its counts and metrics go to the report's by_pair, its tables to
        the pair's partitions; a pair that raises PairSkipped is a counted skip and the others go on."""
        done = []
        for pair in self.pairs:
            label = pair_label(pair)
            with self.report.pair_scope(label, single_pair=len(self.pairs) == 1):
                self.pair = pair
                try:
                    work(pair)
                    done.append(label)
                except PairSkipped as skip:
                    self._skip_pair(label, skip)
                finally:
                    self.pair = None
        self.report.metric("lang_pairs", [pair_label(pair) for pair in self.pairs])
        if not done:
            raise JobFailed(f"{self.name}: every language pair was skipped: "
                            f"{self.report.data['metrics']['pairs_skipped']}")
        self.store.mark_versions_complete()

    def _skip_pair(self, label: str, skip: PairSkipped) -> None:
        """Count the pair's input not yet accounted for as filtered and remove the partitions it wrote."""
        skipped = self.report.skip_pair(skip.reason)
        for table, rows in self.store.remove_pair_writes(label).items():
            self.report.output(table, rows)
        self.log.warning("%s: pair %s skipped (%s); %d input rows counted filtered as pair_%s",
                         self.name, label, skip, skipped, skip.reason)

    def pair_rows(self, frame):
        """The rows of the pair being processed (either direction) of a table written per pair; others whole."""
        if self.pair is None or PAIR_COLUMN not in frame.columns:
            return frame
        from pyspark.sql import functions as F

        return frame.where(F.col(PAIR_COLUMN).isin(pair_label(self.pair), pair_label(self.pair[::-1])))

    def run_pair_label(self, label):
        """Column: the run's label (--langs order) of the pair a stored `label` column names in either direction
        (eng-fra or fra-eng -> eng-fra); null for a pair not in the run."""
        from pyspark.sql import functions as F

        labels = {}
        for pair in self.pairs:
            labels[pair_label(pair[::-1])] = labels[pair_label(pair)] = pair_label(pair)
        return F.create_map(*[F.lit(value) for item in labels.items() for value in item])[label]

    def pair_languages(self, pairs: Iterable[LangPair] | None = None):
        """(lang, lang_pair, src_lang, trg_lang): each language of each pair (the run's by default), for a broadcast
        join on `lang` that gives a row once for every pair holding its language."""
        pairs = self.pairs if pairs is None else pairs
        return self.spark.createDataFrame([(lang, pair_label(pair), *pair) for pair in pairs for lang in pair],
                                          f"lang string, {PAIR_COLUMN} string, src_lang string, trg_lang string")

    @staticmethod
    def counts_by_pair(df, column: str | None = None, every_pair: Collection[str] = ()) -> dict:
        """Rows of a DataFrame of several language pairs per lang_pair ({label: n}), or per lang_pair and value of
        `column` ({label: {value: n}}), in one grouped action; the labels `every_pair` names are there without
        rows too."""
        counts: dict = {label: {} if column else 0 for label in every_pair}
        for row in df.groupBy(PAIR_COLUMN, *([column] if column else [])).count().collect():
            if column:
                counts.setdefault(row[PAIR_COLUMN], {})[str(row[column])] = int(row["count"])
            else:
                counts[row[PAIR_COLUMN]] = int(row["count"])
        return counts
