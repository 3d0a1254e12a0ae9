"""export-crawl-plan on the replay's sample sites: the plan's files, its ranked URLs replayed as a crawl order, and
a site on two hosts crawled by real wget from its plan."""
import contextlib
import gzip
import html
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pandas as pd
import pytest

from parascout.jobs.errors import ConfigError
from parascout.jobs.export_crawl_plan import ExportCrawlPlanJob
from parascout.jobs.replay_crawl import ReplayCrawlJob
from parascout.udfs.common.storage import write_parquet_table
from parascout.udfs.export import crawl_plan
from parascout.udfs.replay import metrics
from parascout.udfs.replay.graph import build_graph
from parascout.udfs.replay.simulator import replay_order
from parascout.udfs.replay.synthetic import multilingual_site
from tests.conftest import run_job
from tests.support.replay import HOSTS


@pytest.mark.slow
def test_replay_keeps_the_planned_policys_fetch_order(spark, planned):
    root, _, _, replay, _ = planned
    summary = spark.read.parquet(str(root / "replay_summary")).toPandas()
    chosen = summary[summary["planned"]]
    assert sorted(chosen["site"]) == ["alpha.is", "beta.is", "gamma.is"] and "oracle" not in set(chosen["policy"])
    for _, row in chosen.iterrows():  # the planned policy is the fastest plannable one to 80%
        others = summary[(summary["site"] == row["site"]) & (summary["policy"] != "oracle")]
        assert row["fetches_to_80"] == others["fetches_to_80"].min()
    frontier = spark.read.parquet(str(root / "replay_frontier")).toPandas()
    assert replay["outputs"]["replay_frontier"] == len(frontier)
    sizes = frontier.groupby("site")["rank"].agg(["min", "max", "count"])
    assert (sizes["min"] == 1).all() and (sizes["max"] == sizes["count"]).all()
    fetched = chosen.set_index("site")["fetched"]
    assert sizes["count"].to_dict() == fetched.to_dict()
    assert frontier.loc[frontier["rank"] == 1, "seed"].all()
    strand = frontier[frontier["policy"] == "strand"]
    assert strand["partner_url"].notna().any() and set(strand["predicted_lang"].dropna()) <= {"eng", "isl"}


@pytest.mark.slow
def test_plan_files_parse_and_report_balances(planned):
    root, _, _, _, report = planned
    assert report["status"] == "ok" and report["balanced"], report
    assert report["kept"] == 3 and report["filtered"] == {"not_replayed": 1}
    plan = pd.read_parquet(root / "crawl_plan")
    assert report["outputs"]["crawl_plan"] == 3 and list(plan.sort_values("shortlist_rank")["site"]) == list(HOSTS[::-1])
    folder = root / "crawl-plan"
    seeds = (folder / "seeds.txt").read_text().splitlines()
    hosts = (folder / "hosts.txt").read_text().splitlines()
    assert gzip.decompress((folder / "hosts.gz").read_bytes()).decode().splitlines() == hosts
    assert len(seeds) == plan["n_seeds"].sum() >= 3
    for url in seeds:  # wget --input-file / Heritrix seeds.txt: absolute http(s) URLs on the planned hosts
        parts = urlsplit(url)
        assert parts.scheme in ("http", "https") and parts.hostname in hosts, url
    assert "hostsFile:" in (folder / "bitextor.yaml").read_text() and "lang2: is" in (folder / "bitextor.yaml").read_text()
    markdown = (folder / "plan.md").read_text()
    for row in plan.itertuples():
        site = root / row.folder
        ranked = (site / "ranked_urls.txt").read_text().splitlines()
        table = pd.read_csv(site / "frontier.tsv", sep="\t", keep_default_na=False)
        assert list(table.columns) == list(crawl_plan.FRONTIER_TSV_COLUMNS)
        replay_seeds, site_seeds = table.loc[table["seed"] == 1, "url"].tolist(), (site / "seeds.txt").read_text().split()
        assert len(ranked) == row.n_urls and len(site_seeds) == row.n_seeds
        assert site_seeds[:len(replay_seeds)] == replay_seeds == ranked[:len(replay_seeds)]  # then roots, homes
        assert table["url"].tolist() == ranked and table["rank"].tolist() == list(range(1, len(ranked) + 1))
        assert f"after ~{row.fetches_to_80} fetches" in row.expected_yield and row.expected_yield in markdown


@pytest.mark.slow
def test_the_ranked_urls_replayed_reach_80_percent_as_predicted(planned):
    """A crawler fed ranked_urls.txt in order reaches 80% of the site's parallel pages within ±10% of the
    fetches replay-crawl predicted."""
    root, docs, truth, _, _ = planned
    plan = pd.read_parquet(root / "crawl_plan")
    for row in plan.itertuples():
        site_docs = docs[docs["host"].isin([f"www.{row.replay_site}", row.replay_site]) & docs["url"].notna()]
        graph = build_graph(site_docs, row.replay_site)
        ranked = (root / row.folder / "ranked_urls.txt").read_text().splitlines()
        crawl = replay_order(graph, ranked, truth)
        reached = metrics.fetches_to_share(crawl.doc_events, crawl.n_parallel_docs, 0.8)
        print(f"{row.site}: plan replay {reached} fetches to 80%, replay-crawl predicted {row.fetches_to_80}")
        assert reached is not None and abs(reached - row.fetches_to_80) <= 0.1 * row.fetches_to_80


@pytest.mark.slow
def test_a_shortlist_without_the_pair_plans_nothing(spark, planned, tmp_path):
    root = planned[0]
    for table in ("shortlist", "replay_summary", "replay_frontier"):
        shutil.copytree(root / table, tmp_path / table)
    report = run_job(ExportCrawlPlanJob, spark, ["--root", str(tmp_path), "--langs", "fr,de"])
    assert report["status"] == "ok" and report["balanced"] and report["outputs"] == {"crawl_plan": 0}
    assert not (tmp_path / "crawl-plan").exists()


def test_plan_arguments_fail_at_start(tmp_path):
    with pytest.raises(ConfigError, match="--top"):
        ExportCrawlPlanJob().run(["--root", str(tmp_path), "--top", "0"])


def test_expected_yield_in_words():
    assert crawl_plan.expected_yield({"policy": "smart", "fetches_to_80": 120, "share_fetches_to_80": 0.3}) == (
        "80% of the site's parallel pages after ~120 fetches (30% of its archived pages) with smart")
    assert crawl_plan.expected_yield({"policy": "bfs", "fetches_to_80": None, "recall": 0.5, "fetched": 40}) == (
        "80% not reached: 50% of the site's parallel pages after 40 fetches with bfs")
    assert crawl_plan.site_folder("www.a.is:8080/x") == "www.a.is_8080_x"


TWO_HOSTS = ("www.delta.is", "islenska.delta.is")  # English on www, Icelandic on a host of its own


@pytest.fixture(scope="module")
def two_host_site(spark, tmp_path_factory):
    """A site whose languages live on sibling hosts (www.x / islenska.x, http: served below), replayed by site
    (registered domain) and planned from a shortlist that names only its English host, as rank-pairs does."""
    root = tmp_path_factory.mktemp("two-host-plan")
    docs, truth = multilingual_site(n_articles=30, host=TWO_HOSTS[0], second_host=TWO_HOSTS[1], seed=3)
    docs = docs.assign(url=docs["url"].str.replace("https://", "http://", regex=False),
                       outlinks=[[link.replace("https://", "http://") for link in links] for links in docs["outlinks"]])
    truth = truth.assign(src_url=truth["src_url"].str.replace("https://", "http://", regex=False),
                         trg_url=truth["trg_url"].str.replace("https://", "http://", regex=False))
    write_parquet_table(docs, str(root / "docs"))
    shortlist = pd.DataFrame({"site": [TWO_HOSTS[0], TWO_HOSTS[1]], "src_lang": "eng", "trg_lang": "isl",
                              "predicted_pairs": [20, 20], "predicted_ratio": [0.5, 0.5], "rank": [1, 2]})
    write_parquet_table(shortlist, str(root / "shortlist"))
    (root / "truth").mkdir()
    truth.to_parquet(root / "truth" / "pairs.parquet")
    run_job(ReplayCrawlJob, spark, ["--root", str(root), "--langs", "en,is", "--truth",
                                    str(root / "truth" / "pairs.parquet"), "--policies", "bfs,strand,oracle"])
    report = run_job(ExportCrawlPlanJob, spark, ["--root", str(root), "--top", "2"])
    return root, docs, truth, report


@pytest.mark.slow
def test_a_site_on_two_hosts_is_replayed_and_planned_as_one(spark, two_host_site):
    root, _, _, report = two_host_site
    summary = spark.read.parquet(str(root / "replay_summary")).toPandas().set_index("policy")
    assert set(summary["site"]) == {"delta.is"}  # both hosts, one site
    assert summary.loc["oracle", "recall"] == 1.0 and summary.loc["bfs", "recall"] > 0.9
    assert report["status"] == "ok" and report["balanced"] and report["kept"] == 1
    assert report["filtered"] == {"same_site": 1}  # the shortlist's second row is the same site
    folder = root / "crawl-plan"
    assert set((folder / "hosts.txt").read_text().splitlines()) == set(TWO_HOSTS)
    seeds = (folder / "seeds.txt").read_text().splitlines()
    assert {f"http://{host}/" for host in TWO_HOSTS} <= set(seeds)


@pytest.mark.slow
def test_wget_from_the_plan_fetches_both_languages(two_host_site, tmp_path):
    """Real wget, given the plan's seeds.txt and hosts.txt as docs/crawl-plan.md says, crawls both hosts of the
    site (served on 127.0.0.1 as an HTTP proxy, so the hosts keep their names) and fetches both sides of every
    true pair."""
    if shutil.which("wget") is None:
        pytest.skip("wget is not installed (apt-get install -y wget)")
    root, docs, truth, _ = two_host_site
    folder = root / "crawl-plan"
    with serve_site(docs) as port:
        command = ["wget", f"--input-file={folder / 'seeds.txt'}", "--recursive", "--level=inf", "--span-hosts",
                   f"--domains={','.join((folder / 'hosts.txt').read_text().split())}", "--no-verbose",
                   "--tries=1", "--timeout=10", "-e", "use_proxy=on", "-e", f"http_proxy=http://127.0.0.1:{port}",
                   f"--directory-prefix={tmp_path / 'crawl'}"]
        subprocess.run(command, check=False, capture_output=True, text=True, timeout=300)  # non-zero on any 404
    fetched = {f"http://{path.relative_to(tmp_path / 'crawl').as_posix()}" for path in (tmp_path / "crawl").rglob("*")
               if path.is_file()}
    fetched |= {url.removesuffix("index.html") for url in fetched}
    assert set(truth["src_url"]) <= fetched and set(truth["trg_url"]) <= fetched
    assert {urlsplit(url).hostname for url in fetched} == set(TWO_HOSTS)


@contextlib.contextmanager
def serve_site(docs: pd.DataFrame):
    """The docs rows as an HTTP proxy serves them on 127.0.0.1: each archived page an HTML page linking its
    outlinks, anything else 404 (a proxy request names the whole URL, so one server holds every host)."""
    pages = {row.url: row.outlinks for row in docs.itertuples() if row.status == "ok"}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            links = pages.get(self.path)
            if links is None:
                self.send_error(404)
                return
            body = "".join(f'<a href="{html.escape(link)}">{k}</a>\n' for k, link in enumerate(links))
            data = f"<!doctype html><html><body>{body}</body></html>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_entry_points_cover_every_host_and_language():
    """A replay seeded inside a language section (https://x.be/en/) still plans the host's root and the other
    language's home, so neither wget --no-parent nor Heritrix's seed scope leaves French out."""
    frontier = [
        {"url": "https://x.be/en/", "seed": True, "archived": True, "cld2_lang": "eng"},
        {"url": "https://x.be/en/about.html", "seed": False, "archived": True, "cld2_lang": "eng"},
        {"url": "https://x.be/fr/a-propos.html", "seed": False, "archived": True, "cld2_lang": "fra"},
        {"url": "https://x.be/fr/", "seed": False, "archived": True, "cld2_lang": "fra"},
        {"url": "http://fr.x.be/contact", "seed": False, "archived": False, "cld2_lang": None},
    ]
    assert crawl_plan.entry_points(frontier, ("eng", "fra")) == [
        "https://x.be/en/", "https://x.be/", "http://fr.x.be/", "https://x.be/fr/"]


HOSTILE_URLS = ["https://www.x.is/a\nhttps://evil.example/", "https://www.x.is/b\tx", "https://www.x.is/\u202egnp.exe",
                "javascript:alert(1)", "https://www.x.is/c\u2028d", "https://www.x.is/e f", "/relative"]


@pytest.mark.slow
def test_urls_a_crawler_list_cannot_hold_are_left_out_and_counted(spark, tmp_path):
    """Page links reach the replay's frontier unchecked: a URL holding a newline would add a seed nobody chose to
    wget's --input-file. Every plan file lists only absolute http(s) URLs without whitespace, control characters or
    bidi overrides; the rest are counted."""
    good = [f"https://www.x.is/{path}" for path in ("", "en/a.html", "is/a.html")]
    urls = [good[0], *HOSTILE_URLS, *good[1:]]
    write_parquet_table(pd.DataFrame({"site": ["www.x.is"], "src_lang": "eng", "trg_lang": "isl", "rank": [1],
                                      "predicted_pairs": [1]}), str(tmp_path / "shortlist"))
    summary = {"site": "x.is", "policy": "bfs", "status": "ok", "planned": True, "n_docs": 3, "n_parallel_docs": 2,
               "budget_fetches": 10, "fetched": len(urls), "docs_found": 2, "recall": 1.0, "auc": 0.5,
               "fetches_to_50": 2, "fetches_to_80": 10, "fetches_to_90": 10, "share_fetches_to_80": 1.0}
    write_parquet_table(pd.DataFrame([summary]), str(tmp_path / "replay_summary"))
    frontier = pd.DataFrame({"site": "x.is", "policy": "bfs", "rank": range(1, len(urls) + 1), "url": urls,
                             "priority": None, "seed": [True] + [False] * (len(urls) - 1), "archived": True,
                             "cld2_lang": ["eng", *[None] * len(HOSTILE_URLS), "eng", "isl"], "predicted_lang": None,
                             "p_lang": None, "partner_url": None})
    write_parquet_table(frontier, str(tmp_path / "replay_frontier"))
    report = run_job(ExportCrawlPlanJob, spark, ["--root", str(tmp_path), "--langs", "en,is"])
    assert report["status"] == "ok" and report["metrics"]["frontier_urls_not_listable"] == len(HOSTILE_URLS)
    folder = tmp_path / "crawl-plan"
    site = folder / "sites" / "x.is"
    assert (site / "ranked_urls.txt").read_text().splitlines() == good
    assert set((folder / "seeds.txt").read_text().splitlines()) <= set(good)
    assert (folder / "hosts.txt").read_text().splitlines() == ["www.x.is"]
    table = pd.read_csv(site / "frontier.tsv", sep="\t", keep_default_na=False)
    assert table["url"].tolist() == good and table["rank"].tolist() == [1, len(urls) - 1, len(urls)]


def test_listable_urls_are_absolute_http_without_line_breaking_characters():
    assert all(not crawl_plan.listable_url(url) for url in [*HOSTILE_URLS, None, "", "http://[::1/"])
    assert crawl_plan.listable_url("https://www.x.is/a%0Ab?q=1#f") and crawl_plan.listable_url("http://10.0.0.1:8080/")
