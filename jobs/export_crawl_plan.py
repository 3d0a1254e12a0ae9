"""export-crawl-plan: what a crawler starts from, for the shortlist's top sites: seeds, ranked URLs, hosts, yield.

Reads the shortlist (its `--top N` sites of the language pair), replay_summary (per site the planned policy:
fewest fetches to 80% of the parallel documents, then AUC) and replay_frontier (that policy's fetch order).
Writes the `crawl_plan` table (one row per planned site with its expected yield) and, under
<root>/crawl-plan/ (docs/crawl-plan.md says how each crawler reads them):
- seeds.txt: every planned site's entry points (the replay's seeds, every host's root, each language's home),
  one URL per line (wget --input-file, Heritrix seeds.txt);
- hosts.txt and hosts.gz: the hosts a crawl of each site stays on (every host of the site its replay fetched
  from), one per line (Bitextor `hostsFile`), bitextor.yaml: a Bitextor config naming it (relative: hosts.gz);
- sites/<site>/seeds.txt, ranked_urls.txt (the planned crawl order, one URL per line), frontier.tsv (rank, url,
  priority, predicted language and partner), hosts.txt;
- plan.md: per site the policy and "80% of the site's parallel pages after ~N fetches".
A frontier URL that a one-URL-per-line list cannot hold as itself (whitespace, control characters, bidi overrides,
not absolute http(s): page links reach the frontier unchecked) is left out of every file and counted
(metrics.frontier_urls_not_listable). Shortlist rows in = planned + filtered (not_replayed: no replay of the site;
no_plannable_policy: only oracle or failed replays; same_site: another host of a site a better-ranked row already
plans).
"""
from __future__ import annotations

import contextlib
import gzip

import pandas as pd
from pyspark.sql import functions as F

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import language_pair_option
from parascout.jobs.replay_crawl import shortlist_site_of
from parascout.udfs.common import storage, tables
from parascout.udfs.common.langs import pair_label
from parascout.udfs.common.report_document import markdown_cell
from parascout.udfs.common.table_store import PAIR_COLUMN
from parascout.udfs.common.urls import url_host
from parascout.udfs.export.crawl_plan import (
    FRONTIER_TSV_COLUMNS,
    YIELD_COLUMNS,
    bitextor_config,
    entry_points,
    expected_yield,
    frontier_line,
    listable_url,
    site_folder,
)

#: the groupings replay-crawl may have used, most likely first (its --group-by; host: the name itself)
REPLAY_GROUPINGS = ("domain", "site", "name")
FILTERED_REASONS = frozenset({"not_replayed", "no_plannable_policy", "same_site"})
PLAN_FOLDER = "crawl-plan"
#: the Bitextor hosts file, named relative to bitextor.yaml beside it (the plan folder may move, or be on s3://)
HOSTS_FILE = "hosts.gz"
PLAN_SCHEMA = tables.ddl("crawl_plan")
PLAN_TYPES = {column.name: column.type for column in tables.fields("crawl_plan")}


class ExportCrawlPlanJob(Job):
    name = "export-crawl-plan"
    description = "seed lists, ranked URLs and Bitextor hosts files for the shortlist's top sites, from the replay"
    outputs = ("crawl_plan",)
    inputs = ("shortlist", "replay_summary", "replay_frontier")

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--top", type=int, default=20, help="plan the shortlist's N best-ranked sites")
        parser.add_argument("--langs", help="language pair (default: the shortlist's first row's)")

    def validate_arguments(self, args) -> None:
        super().validate_arguments(args)
        self.languages = language_pair_option(args.langs)
        if args.top < 1:
            raise ConfigError("--top must be at least 1")

    def process(self) -> None:
        top = self.top_sites()
        self.report.input("shortlist (top sites)", len(top))
        if top.empty:  # no site of the pair shortlisted: an empty plan, no files
            self.report.kept(0)
            self.write_table(self.spark.createDataFrame([], PLAN_SCHEMA), "crawl_plan")
            return
        replayed = set(self.replay_table("replay_summary").select("site").distinct().toPandas()["site"])
        name = self.replay_name(replayed)
        top = top.assign(replay_site=top["site"].map(name))
        same_site = int(top.duplicated("replay_site").sum())  # fra.x.org after www.x.org: one site, planned once
        top = top.drop_duplicates("replay_site")
        planned = top.merge(self.planned_summary(), on="replay_site", how="inner")
        missing = top[~top["replay_site"].isin(planned["replay_site"])]
        not_replayed = int((~missing["replay_site"].isin(replayed)).sum())
        self.report.kept(len(planned))
        self.report.add_counts({"not_replayed": not_replayed, "no_plannable_policy": len(missing) - not_replayed,
                                "same_site": same_site},
                               bad_reasons=frozenset(), filtered_reasons=FILTERED_REASONS)
        planned = planned.assign(expected_yield=[expected_yield(row) for row in planned.to_dict("records")],
                                 folder=[storage.join(PLAN_FOLDER, "sites", site_folder(s)) for s in planned["replay_site"]])
        counts = self.write_files(planned)
        for position, column in enumerate(("n_seeds", "n_urls", "n_hosts")):
            planned[column] = planned["replay_site"].map(lambda site, k=position: counts[site][k])
        records = [{column: _plain(row.get(column), kind) for column, kind in PLAN_TYPES.items()}
                   for row in planned.to_dict("records")]
        self.write_table(self.spark.createDataFrame(records, PLAN_SCHEMA), "crawl_plan")

    def top_sites(self):
        """The shortlist's `--top` sites of the language pair, best first (N rows to the driver)."""
        shortlist = self.read_table("shortlist")
        if self.languages:
            pair = F.array_sort(F.array("src_lang", "trg_lang"))
            shortlist = shortlist.where(pair == F.array_sort(F.array(*[F.lit(c) for c in self.languages])))
        top = (shortlist.orderBy("rank", "site").limit(self.args.top)
               .select("site", F.col("rank").alias("shortlist_rank"), "src_lang", "trg_lang",
                       "predicted_pairs").toPandas())
        if not self.languages and len(top):
            self.languages = (top["src_lang"].iloc[0], top["trg_lang"].iloc[0])
        return top

    def replay_table(self, table: str):
        """A replay-crawl table, its rows of the plan's language pair when the replay ran several (lang_pair)."""
        frame = self.read_table(table)
        if PAIR_COLUMN not in frame.columns or not self.languages:
            return frame
        return frame.where(F.col(PAIR_COLUMN).isin(pair_label(self.languages), pair_label(self.languages[::-1])))

    def replay_name(self, replayed: set[str]):
        """A shortlist site -> the replay's name for it: itself, or its site by the first grouping that names a
        replayed site (replay-crawl groups a registered domain's hosts by default; rank-pairs strips only www
        and language labels: fra.x.org stays fra.x.org in a shortlist, x.org in the replay)."""
        namers = [shortlist_site_of((), self.languages or ("", ""), grouping) for grouping in REPLAY_GROUPINGS]

        def name(site: str) -> str:
            return next((n for n in (site, *(namer(site) for namer in namers)) if n in replayed), namers[0](site))
        return name

    def planned_summary(self):
        """The planned policy's replay_summary row of every replayed site (one row per site)."""
        return (self.replay_table("replay_summary").where(F.col("planned") & (F.col("status") == "ok"))
                .select(F.col("site").alias("replay_site"), *YIELD_COLUMNS).toPandas())

    def write_files(self, planned) -> dict[str, tuple[int, int, int]]:
        """Per-site files streamed from replay_frontier (site by site, in rank order), then the combined seeds,
        hosts, Bitextor fragment and plan.md; returns replay site -> (seeds, urls, hosts)."""
        folder = storage.join(self.args.root, PLAN_FOLDER)
        frontier = (self.replay_table("replay_frontier").where(F.col("site").isin(list(planned["replay_site"])))
                    .orderBy("site", "rank"))
        folders = dict(zip(planned["replay_site"], planned["folder"]))
        seeds: dict[str, list[str]] = {site: [] for site in folders}
        hosts: dict[str, list[str]] = {site: [] for site in folders}
        urls = dict.fromkeys(folders, 0)
        unlisted = 0
        files, current, ranked, table, visited = contextlib.ExitStack(), None, None, None, []
        with files:
            for row in frontier.toLocalIterator():
                if row["site"] != current:  # the next site: its files replace the last one's
                    files.close()
                    self.site_done(current, visited, seeds, hosts)
                    current, visited, base = row["site"], [], storage.join(self.args.root, folders[row["site"]])
                    ranked = files.enter_context(storage.open_output(storage.join(base, "ranked_urls.txt")))
                    table = files.enter_context(storage.open_output(storage.join(base, "frontier.tsv")))
                    table.write(("\t".join(FRONTIER_TSV_COLUMNS) + "\n").encode())
                record = row.asDict()
                if not listable_url(record["url"]):  # a link holding a newline, a tab, a bidi override ...
                    unlisted += 1
                    continue
                ranked.write(f"{record['url']}\n".encode())
                table.write(frontier_line(record).encode())
                urls[current] += 1
                visited.append({key: record.get(key) for key in ("url", "seed", "archived", "cld2_lang")})
        self.site_done(current, visited, seeds, hosts)
        for site, base in folders.items():
            self.write_lines(storage.join(self.args.root, base, "seeds.txt"), seeds[site])
            self.write_lines(storage.join(self.args.root, base, "hosts.txt"), hosts[site])
        all_hosts = list(dict.fromkeys(h for site in folders for h in hosts[site]))
        self.report.output(f"{PLAN_FOLDER}/seeds.txt",
                           self.write_lines(storage.join(folder, "seeds.txt"), [u for s in folders for u in seeds[s]]))
        self.report.output(f"{PLAN_FOLDER}/hosts.txt", self.write_lines(storage.join(folder, "hosts.txt"), all_hosts))
        with storage.open_output(storage.join(folder, "hosts.gz")) as out:
            out.write(gzip.compress("".join(f"{h}\n" for h in all_hosts).encode()))
        storage.write_text(storage.join(folder, "bitextor.yaml"), bitextor_config(HOSTS_FILE, self.iso639_1_pair()))
        storage.write_text(storage.join(folder, "plan.md"), self.plan_markdown(planned, urls))
        self.report.output(f"{PLAN_FOLDER}/sites/*/ranked_urls.txt", sum(urls.values()))
        self.report.metric("frontier_urls_not_listable", unlisted)
        return {site: (len(seeds[site]), urls[site], len(hosts[site])) for site in folders}

    def site_done(self, site: str | None, visited: list[dict], seeds: dict, hosts: dict) -> None:
        """A site's seeds (its entry points) and hosts (every host its crawl fetched from), once its frontier
        rows are read."""
        if site is None:
            return
        seeds[site] = entry_points(visited, self.languages or ())  # on the hosts of the visited URLs
        hosts[site] = [host for host in dict.fromkeys(url_host(row["url"]) for row in visited) if host]

    def iso639_1_pair(self) -> tuple[str, str]:
        """The pair as Bitextor's lang1/lang2 want it (two-letter codes where the language has one)."""
        from parascout.udfs.common.langs import load_languages

        languages = load_languages()
        return tuple(languages[code].iso639_1 or code if code in languages else code for code in self.languages)

    @staticmethod
    def plan_markdown(planned, urls: dict[str, int]) -> str:
        lines = ["# Crawl plan", "", "| rank | site | policy | ranked URLs | expected yield | files |",
                 "|---|---|---|---|---|---|"]
        for row in planned.sort_values("shortlist_rank").to_dict("records"):
            lines.append(f"| {row['shortlist_rank']} | {markdown_cell(row['site'])} | {row['policy']} | "
                         f"{urls[row['replay_site']]} | {row['expected_yield']} | {markdown_cell(row['folder'])}/ |")
        return "\n".join(lines) + "\n"

    @staticmethod
    def write_lines(path: str, lines: list[str]) -> int:
        storage.write_text(path, "".join(f"{line}\n" for line in lines))
        return len(lines)


def _plain(value, spark_type: str):
    """A pandas cell as Spark takes it under `spark_type`: None for NaN / NA, Python ints and floats."""
    if not isinstance(value, str) and pd.isna(value):
        return None
    if spark_type in ("int", "bigint"):
        return int(value)
    return float(value) if spark_type == "double" else value


if __name__ == "__main__":
    ExportCrawlPlanJob().run()
