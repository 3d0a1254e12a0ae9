"""Jobs that lose a Python worker or a whole executor JVM mid-job (a spot node taken back) give the same tables and
report as an undisturbed run: Spark retries the lost tasks, and the jobs' tasks are deterministic and write nothing
outside the staged write that a retry could leave behind or count twice.

Each run is a subprocess in local-cluster mode (two executor JVMs under a standalone master, which launches a
replacement for a lost one), with the task retries a cluster runs with; a watcher thread SIGKILLs the chosen process
while it runs a task.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import psutil
import pytest

from parascout.udfs.common import table_layout
from testkit.servers import RangeServer
from testkit.warc import file_records, urls_rows, write_table, write_warc
from tests.conftest import REPO

pytestmark = pytest.mark.slow
CDX = REPO / "tests" / "data" / "cdx"
#: conf/emr.yaml and conf/dataproc.yaml leave spark.task.maxFailures at Spark's cluster default, 4 tries per task
CLUSTER = ["--spark-conf", "spark.master=local-cluster[2,1,1024]", "--spark-conf", "spark.task.maxFailures=4",
           "--spark-conf", "spark.ui.enabled=false", "--spark-conf", "spark.sql.shuffle.partitions=4"]
EXECUTOR = "CoarseGrainedExecutorBackend"
#: Linux's name (15 characters) of an executor thread running a task ("Executor task launch worker for task ...";
#: an idle one is "Executor task idle worker")
RUNNING_TASK_THREAD = "Executor task l"
FETCH_FILES, FETCH_PARTITIONS = 8, 4
Chooser = Callable[[list[psutil.Process]], psutil.Process | None]


class Watcher(threading.Thread):
    """Polls the processes under a job for the one `choose` picks, SIGKILLs it and records what it killed."""

    def __init__(self, job_pid: int, choose: Chooser, after_kill: Callable[[], None] = lambda: None):
        super().__init__(daemon=True)
        self.job, self.choose, self.after_kill = psutil.Process(job_pid), choose, after_kill
        self.killed: dict | None = None

    def run(self) -> None:
        while self.job.is_running() and self.killed is None:
            try:
                victim = self.choose(self.job.children(recursive=True))
                if victim is not None:
                    self.kill(victim)
            except psutil.NoSuchProcess:  # a process ended between the listing and the look
                pass
            time.sleep(0.1)

    def kill(self, victim: psutil.Process) -> None:
        facts = {"pid": victim.pid, "cmdline": " ".join(victim.cmdline()),
                 "seconds_alive": round(time.time() - victim.create_time(), 1)}
        victim.kill()
        victim.wait(30)
        self.killed = {**facts, "gone": not victim.is_running()}
        self.after_kill()


def run_job(module: str, argv: list[str], log: Path, watch: Callable[[int], Watcher] | None = None
            ) -> tuple[dict, dict | None]:
    """Run `python -m module argv` on the local cluster, watched when `watch` is given: (report, what was killed)."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    with open(log, "wb") as output:
        process = subprocess.Popen([sys.executable, "-m", module, *argv, *CLUSTER], cwd=REPO, env=env,
                                   stdout=output, stderr=subprocess.STDOUT)
    watcher = watch(process.pid) if watch else None
    if watcher:
        watcher.start()
    try:
        returncode = process.wait(timeout=400)
    finally:
        if process.poll() is None:  # timed out: no JVM or Python worker of the run is left behind
            for child in [*psutil.Process(process.pid).children(recursive=True), process]:
                child.kill()
    if watcher:
        watcher.join(30)
    assert returncode == 0, log.read_text()[-4000:]
    root = Path(argv[argv.index("--root") + 1])
    job = module.rsplit(".", 1)[1].replace("_", "-")
    return json.loads((root / "_reports" / f"{job}.json").read_text()), watcher.killed if watcher else None


def counts_of(report: dict) -> dict:
    """What a run accounted for, less what describes the cluster rather than the data."""
    metrics = {key: value for key, value in report["metrics"].items() if key != "executors"}
    return {**{key: report[key] for key in ("status", "inputs", "kept", "filtered", "bad", "outputs", "balanced")},
            "metrics": metrics}


def table_rows(root: Path, table: str) -> pd.DataFrame:
    """The table's current version, rows sorted by every column (nested values by their text)."""
    frame = pd.read_parquet(table_layout.table_location(str(root / table)))
    order = frame.astype(str).agg("\x1f".join, axis=1).argsort(kind="stable")
    return frame.iloc[order.to_numpy()].reset_index(drop=True)


def assert_same_run(root: Path, report: dict, undisturbed_root: Path, undisturbed: dict, outputs: tuple) -> None:
    assert report["status"] == "ok" and report["balanced"]
    assert counts_of(report) == counts_of(undisturbed)
    for table in outputs:
        pd.testing.assert_frame_equal(table_rows(root, table), table_rows(undisturbed_root, table))


def command_line(process: psutil.Process) -> str:
    """The process's command line; empty for one that ended or is a zombie (the JVMs leave short-lived ones)."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def executor_of(process: psutil.Process) -> psutil.Process | None:
    """The executor JVM a process runs under (itself included)."""
    for candidate in (process, *process.parents()):
        if EXECUTOR in command_line(candidate):
            return candidate
    return None


class TaskRunningExecutor:
    """Picks an executor JVM once one of its threads has run a task for `seconds`."""

    def __init__(self, seconds: float = 0.5):
        self.seconds, self.first_seen = seconds, {}

    def __call__(self, processes: list[psutil.Process]) -> psutil.Process | None:
        now = time.monotonic()
        for process in processes:
            if EXECUTOR not in command_line(process):
                continue
            for thread in process.threads():
                try:
                    name = Path(f"/proc/{process.pid}/task/{thread.id}/comm").read_text().strip()
                except OSError:
                    continue
                if name == RUNNING_TASK_THREAD:
                    if now - self.first_seen.setdefault((process.pid, thread.id), now) >= self.seconds:
                        return process
                else:
                    self.first_seen.pop((process.pid, thread.id), None)
        return None


@pytest.fixture(scope="module")
def scan_cdx_undisturbed(tmp_path_factory):
    root = tmp_path_factory.mktemp("scan-cdx-undisturbed")
    return root, run_job("parascout.jobs.scan_cdx", scan_cdx_argv(root), root / "job.log")[0]


def scan_cdx_argv(root: Path) -> list[str]:
    return ["--root", str(root), "--cdx", str(CDX), "--crawl", "CC-MAIN-2024-33", "--langs", "en,is",
            "--max-bad-fraction", "0.5"]


def test_scan_cdx_gives_the_same_tables_after_a_lost_executor(tmp_path, scan_cdx_undisturbed):
    """scan-cdx with the jar built runs its tasks on the JVM alone (the jar's reader and UDFs): no Python worker to
    lose, an executor to lose."""
    report, killed = run_job("parascout.jobs.scan_cdx", scan_cdx_argv(tmp_path), tmp_path / "job.log",
                             lambda pid: Watcher(pid, TaskRunningExecutor()))
    assert killed is not None and killed["gone"] and EXECUTOR in killed["cmdline"], killed
    assert "ExecutorLostFailure" in (tmp_path / "job.log").read_text()  # a running task was lost with it
    assert_same_run(tmp_path, report, *scan_cdx_undisturbed, ("urls", "hosts"))


class HeldServer(RangeServer):
    """Serves WARC files with HTTP Range; while `hold` is set, the first GET waits until `released` (its client's
    port in `held`), so a fetch task is surely running in a Python worker when the watcher looks."""

    hold: bool
    held: list[int]
    lock: threading.Lock
    released: threading.Event

    def do_GET(self):
        with self.lock:
            first = self.hold and not self.held
            if first:
                self.held.append(self.client_address[1])
        if first:
            self.released.wait(120)
        try:
            super().do_GET()
        except (BrokenPipeError, ConnectionResetError):  # the held GET's worker was killed
            pass

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def fetch_archive(tmp_path_factory):
    """WARC files served over HTTP and their `urls` rows: pages, a PDF (filtered) and bytes that are no WARC record
    (bad); (prefix, handler, rows)."""
    folder = tmp_path_factory.mktemp("archive")
    rows = []
    for number in range(FETCH_FILES):
        rows += write_warc(folder / f"crawl-{number:03d}.warc.gz", file_records(number, 3))
    handler = type("Handler", (HeldServer,), {"root": folder, "seen": [], "hold": False, "held": [],
                                              "lock": threading.Lock(), "released": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", handler, urls_rows(rows)
    handler.released.set()
    server.shutdown()


def fetch_docs_argv(root: Path, prefix: str) -> list[str]:
    return ["--root", str(root), "--warc-prefix", prefix, "--select", "all", "--partitions", str(FETCH_PARTITIONS)]


@pytest.fixture(scope="module")
def fetch_docs_undisturbed(tmp_path_factory, fetch_archive):
    prefix, handler, urls = fetch_archive
    root = tmp_path_factory.mktemp("fetch-docs-undisturbed")
    write_table(root, "urls", urls)
    handler.hold = False
    return root, run_job("parascout.jobs.fetch_docs", fetch_docs_argv(root, prefix), root / "job.log")[0]


def holder_of(handler, choose_executor: bool) -> Chooser:
    """Picks the Python worker that sent the held GET (or its executor JVM)."""
    def choose(processes: list[psutil.Process]) -> psutil.Process | None:
        if not handler.held:
            return None
        for process in processes:
            if "pyspark.daemon" not in command_line(process):
                continue
            ports = {connection.laddr.port for connection in process.net_connections(kind="tcp")}
            if handler.held[0] in ports:
                return executor_of(process) if choose_executor else process
        return None
    return choose


@pytest.mark.parametrize("lost", ["python-worker", "executor"])
def test_fetch_docs_gives_the_same_tables_after_a_lost_process(tmp_path, fetch_archive, fetch_docs_undisturbed, lost):
    """fetch-docs fetches and parses in Python workers (mapInPandas) and keeps each finished task in its resume
    area: a task killed mid-GET is fetched again, and no record is counted twice."""
    prefix, handler, urls = fetch_archive
    write_table(tmp_path, "urls", urls)
    handler.hold, handler.held, handler.released = True, [], threading.Event()
    try:
        report, killed = run_job("parascout.jobs.fetch_docs", fetch_docs_argv(tmp_path, prefix), tmp_path / "job.log",
                                 lambda pid: Watcher(pid, holder_of(handler, lost == "executor"), handler.released.set))
    finally:
        handler.released.set()
        handler.hold = False
    assert_lost(killed, lost, tmp_path / "job.log")
    assert_same_run(tmp_path, report, *fetch_docs_undisturbed, ("docs", "texts"))
    assert not Path(tmp_path, table_layout.STAGING, "_resume", "fetch-docs").exists()



BITEXT_PAIRS = 300
INPUTS_WRITTEN_AT = 1_722_470_400  # 2024-08-01 UTC: both runs' inputs carry the same time
PARAGRAPH = {"text": "string", "type": "string", "lang": "string", "boilerplate": "bool", "hash": "string"}


def write_bitext_inputs(root: Path) -> None:
    """verified_pairs and texts of BITEXT_PAIRS English-French document pairs, each a few sentence pairs long."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pairs, texts = [], []
    for number in range(BITEXT_PAIRS):
        site = f"site{number % 7}.example"
        urls = {side: f"http://{site}/{side}/{number}" for side in ("en", "fr")}
        pairs.append({"site": site, "host": site, "src_url": urls["en"], "trg_url": urls["fr"], "src_lang": "eng",
                      "trg_lang": "fra", "p_parallel_content": 0.9, "parallel": True})
        for side, paragraphs in (("en", [f"The house number {number} is red. It stands by the river.",
                                         f"My father built it in {1900 + number}. He lived there for years."]),
                                 ("fr", [f"La maison numéro {number} est rouge. Elle se trouve au bord de la rivière.",
                                         f"Mon père l'a construite en {1900 + number}. Il y a vécu des années."])):
            texts.append({"url": urls[side], "duplicate_of": None, "main_text": "\n".join(paragraphs),
                          "paragraphs": [{"text": text, "type": "text", "lang": None, "boilerplate": False,
                                          "hash": f"{side}{number}-{index}"} for index, text in enumerate(paragraphs)]})
    paragraph = pa.struct([(name, pa.type_for_alias(kind)) for name, kind in PARAGRAPH.items()])
    schema = pa.schema([("url", pa.string()), ("duplicate_of", pa.string()), ("main_text", pa.string()),
                        ("paragraphs", pa.list_(paragraph))])
    for name, table in (("verified_pairs", pa.Table.from_pylist(pairs)), ("texts", pa.Table.from_pylist(texts, schema))):
        (root / name).mkdir(parents=True)
        pq.write_table(table, root / name / "part-0.parquet")
        (root / name / "_SUCCESS").touch()
        os.utime(root / name / "_SUCCESS", (INPUTS_WRITTEN_AT, INPUTS_WRITTEN_AT))  # the TMX's creation date


def bitext_files(root: Path) -> dict[str, bytes]:
    return {path.name: gzip.decompress(path.read_bytes()) for path in sorted((root / "bitext").glob("*.gz"))}


@pytest.fixture(scope="module")
def export_bitext_undisturbed(tmp_path_factory):
    root = tmp_path_factory.mktemp("export-bitext-undisturbed")
    write_bitext_inputs(root)
    return root, run_job("parascout.jobs.export_bitext", ["--root", str(root), "--langs", "en,fr"], root / "job.log")[0]


@pytest.mark.parametrize("lost", ["python-worker", "executor"])
def test_export_bitext_gives_the_same_tables_and_files_after_a_lost_process(tmp_path, export_bitext_undisturbed, lost):
    """export-bitext aligns sentences in Python workers and writes its bitext files on the driver, once the tables
    are written: a Python worker, or the executor it runs under, lost while it runs a task changes neither."""
    write_bitext_inputs(tmp_path)
    chooser = BusyPythonWorker(executor=lost == "executor")
    report, killed = run_job("parascout.jobs.export_bitext", ["--root", str(tmp_path), "--langs", "en,fr"],
                             tmp_path / "job.log", lambda pid: Watcher(pid, chooser))
    assert_lost(killed, lost, tmp_path / "job.log")
    undisturbed_root, undisturbed = export_bitext_undisturbed
    assert_same_run(tmp_path, report, undisturbed_root, undisturbed,
                    ("bitext_documents", "bitext_sentences", "bitext_sites"))
    # the three Bitextor files and the two header-less copies the real-sites scorer reads
    assert bitext_files(tmp_path) == bitext_files(undisturbed_root) and len(bitext_files(tmp_path)) == 5


class BusyPythonWorker:
    """Picks a Python worker (a child the pyspark.daemon forked for tasks) while it runs a task, or with `executor`
    the executor JVM it runs under: it has used `cpu_seconds` of CPU since it was first seen and more since the last
    look (a reused worker between tasks waits on its socket, idle), and with `in_task` its executor has a thread
    running a task (one core each: the worker's task); nothing until `ready()` has held once."""

    def __init__(self, executor: bool, cpu_seconds: float = 0.5, ready: Callable[[], bool] = lambda: True,
                 in_task: bool = True):
        self.executor, self.cpu_seconds, self.ready, self.in_task = executor, cpu_seconds, ready, in_task
        self.first_seen: dict[int, float] = {}
        self.last_seen: dict[int, float] = {}
        self.was_ready = False

    def __call__(self, processes: list[psutil.Process]) -> psutil.Process | None:
        self.was_ready = self.was_ready or self.ready()
        for process in processes:
            parent = process.parent()
            if "pyspark.daemon" not in command_line(process) or parent is None or \
                    "pyspark.daemon" not in command_line(parent):
                continue
            used = sum(process.cpu_times()[:2])
            first = self.first_seen.setdefault(process.pid, used)
            busy = used > self.last_seen.get(process.pid, used)
            self.last_seen[process.pid] = used
            if not (self.was_ready and busy and used - first >= self.cpu_seconds):
                continue
            executor = executor_of(process)
            if not self.in_task or executor is not None and running_a_task(executor):
                return executor if self.executor else process
        return None


def assert_lost(killed: dict | None, lost: str, log: Path) -> None:
    """The watcher killed what the test meant to lose (a Python worker running a task, or its executor JVM), and Spark
    saw the task fail for it, so the run's equality with an undisturbed one tells something."""
    assert killed is not None and killed["gone"], killed
    assert (EXECUTOR if lost == "executor" else "pyspark.daemon") in killed["cmdline"], killed
    assert ("ExecutorLostFailure" if lost == "executor" else "Python worker exited unexpectedly") in log.read_text()


def running_a_task(executor: psutil.Process) -> bool:
    """Whether one of the executor JVM's threads runs a task now."""
    for thread in executor.threads():
        try:
            if Path(f"/proc/{executor.pid}/task/{thread.id}/comm").read_text().strip() == RUNNING_TASK_THREAD:
                return True
        except OSError:
            continue
    return False


def write_arrow(root: Path, name: str, table) -> None:
    """A Parquet table folder (one file and _SUCCESS) under root, as the jobs' inputs."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / name).mkdir(parents=True)
    pq.write_table(table if isinstance(table, pa.Table) else pa.Table.from_pandas(table, preserve_index=False),
                   root / name / "part-0.parquet")
    (root / name / "_SUCCESS").touch()


def assert_not_empty(root: Path, names: tuple[str, ...]) -> None:
    """The compared tables hold rows: an equality of two empty runs would prove nothing."""
    for table in names:
        assert len(table_rows(root, table)) > 0, table


# ---- rank-pairs: the URL models and archive of tests/rank/test_rank_pairs_job.py, a few of its sites -------------------
RANK_OUTPUTS = ("scored_pairs", "alignment", "rank_hosts")


def rank_urls() -> pd.DataFrame:
    """rank-pairs' test archive (tests/support/rank_pairs.py) made small: three convention sites, the link-, image- and
    paragraph-length-only sites, a monolingual site; url, site, lang, pair_id and the urls columns."""
    from parascout.udfs.common.urls import registered_domain, surt
    from testkit.sites import ICELANDIC, WORDS, synthetic_sites
    from tests.support.rank_pairs import image_site_pairs, prose_site_pairs, site_rows

    links = [(f"https://links.is/en/{WORDS[i]}/{WORDS[(i * 7) % 30]}", f"https://links.is/is/{ICELANDIC[i]}/s{i}")
             for i in range(30)]
    rows = site_rows("links.is", links) + site_rows("images.is", image_site_pairs()) + site_rows(
        "prose.is", prose_site_pairs()) + [(f"https://mono.is/en/page-{i}", "mono.is", "eng", None) for i in range(5)]
    urls = pd.concat([synthetic_sites(n_sites=3, pages=20, seed=3),
                      pd.DataFrame(rows, columns=["url", "site", "lang", "pair_id"])], ignore_index=True)
    urls["host"] = [url.split("/")[2] for url in urls["url"]]
    urls["domain"] = [registered_domain(host) for host in urls["host"]]
    urls["surt"] = [surt(url) for url in urls["url"]]
    urls["status"], urls["mime"] = "200", "text/html"
    return urls


def write_rank_inputs(root: Path) -> None:
    """urls (with duplicates and broken rows), handle candidates and docs (links, images, paragraph lengths)."""
    import pyarrow as pa

    from tests.support.rank_pairs import broken_rows, image_docs, links_docs, prose_docs

    urls = rank_urls()
    plain = urls.drop(columns=["site", "pair_id"])
    table = pd.concat([plain, plain.head(3), broken_rows()], ignore_index=True)
    write_arrow(root, "urls", table[["url", "surt", "host", "domain", "lang", "status", "mime"]])
    site0, site1 = urls[urls["host"] == "www.site0.is"], urls[urls["site"] == "site1.is"]
    en, is_ = site0[site0["lang"] == "eng"]["url"].tolist(), site0[site0["lang"] == "isl"]["url"].tolist()
    handles = [(en[0], is_[0]), (is_[1], en[1]), (en[2], "https://site9.is/is/x"), (en[3], site1["url"].iloc[0]),
               (en[4], en[5])]  # ok, ok (reversed), url_not_kept, cross_site, same_language
    write_arrow(root, "candidates", pd.DataFrame(handles, columns=["src_url", "trg_url"]).assign(
        host="www.site0.is", src_lang="eng", trg_lang="isl", source="handle", handle="h"))
    strings = pa.list_(pa.string())
    schema = pa.schema([("url", pa.string()), ("host", pa.string()), ("status", pa.string()), ("outlinks", strings),
                        ("images", strings), ("structure", strings), ("outlink_cues", strings)])
    docs = links_docs(urls) + image_docs() + prose_docs()
    write_arrow(root, "docs", pa.Table.from_pylist([dict(zip(schema.names, row)) for row in docs], schema))


def rank_pairs_argv(root: Path, url_models: dict) -> list[str]:
    """Every blocker on, sites split into groups of at most 20 URLs, the rescoring model too."""
    return ["--root", str(root), "--langs", "en,is", "--lang-model", url_models["lang"], "--pair-model",
            url_models["pairs"], "--rescore-model", url_models["pairs"], "--top-k", "5", "--max-group-urls", "20",
            "--exhaustive-max-pairs", "150", "--lang-threshold", "0.4", "--align-min-score", "0.0",
            "--image-max-pages", "3", "--structure-top-k", "1"]


@pytest.fixture(scope="module")
def rank_models(request) -> dict:
    """rank-pairs' url2lang and pair models (the module fixture `models` of tests/conftest.py, trained once here)."""
    return request.getfixturevalue("models")


@pytest.fixture(scope="module")
def rank_pairs_undisturbed(tmp_path_factory, rank_models):
    root = tmp_path_factory.mktemp("rank-pairs-undisturbed")
    write_rank_inputs(root)
    report = run_job("parascout.jobs.rank_pairs", rank_pairs_argv(root, rank_models), root / "job.log")[0]
    assert_not_empty(root, RANK_OUTPUTS)
    return root, report


def staged(root: Path, prefix: str) -> Callable[[], bool]:
    """Whether rank-pairs has materialised an intermediate table (<root>/_tmp/rank-pairs-<name>-*) yet."""
    return lambda: any((root / "_tmp").glob(f"{prefix}-*/_SUCCESS"))


def test_rank_pairs_gives_the_same_tables_after_a_lost_executor(tmp_path, rank_models, rank_pairs_undisturbed):
    """rank-pairs blocks, scores and aligns in Python workers (applyInPandas) over tables it stages under _tmp: an
    executor lost while its Python worker runs a task, once the blocking groups are staged, gives the same pairs,
    alignment, site rows and report counts."""
    write_rank_inputs(tmp_path)
    chooser = BusyPythonWorker(executor=True, ready=staged(tmp_path, "rank-pairs-groups"))
    report, killed = run_job("parascout.jobs.rank_pairs", rank_pairs_argv(tmp_path, rank_models),
                             tmp_path / "job.log", lambda pid: Watcher(pid, chooser))
    assert_lost(killed, "executor", tmp_path / "job.log")
    assert_same_run(tmp_path, report, *rank_pairs_undisturbed, RANK_OUTPUTS)


# ---- verify-pairs: verify-pairs' templated content site (tests/support/verify_sites.py) on four hosts, its lexicon -
VERIFY_HOSTS = 4


def write_verify_inputs(root: Path) -> None:
    """docs, texts and candidates of VERIFY_HOSTS hosts, each verify-pairs' content site (12
    translations, 12 wrong pairs, a near-copy) with its own seed."""
    from tests.support.verify_sites import HOST, content_site

    pages, pairs = [], []
    for number in range(VERIFY_HOSTS):
        host_pages, host_pairs, _ = content_site(random.Random(3 + number))
        host = f"www.example{number}.com"
        for frame, columns in ((host_pages, ("url", "host", "duplicate_of")), (host_pairs, ("host", "src_url", "trg_url"))):
            for column in columns:
                frame[column] = frame[column].str.replace(HOST, host, regex=False)
        pages.append(host_pages)
        pairs.append(host_pairs)
    pages = pd.concat(pages, ignore_index=True)
    write_arrow(root, "docs", pages[[c for c in pages.columns if c not in ("text_paragraphs", "main_text",
                                                                            "duplicate_of")]])
    texts = pages[["url", "host", "cld2_lang", "text_paragraphs", "main_text", "duplicate_of"]].rename(
        columns={"cld2_lang": "lang", "text_paragraphs": "paragraphs"})
    write_arrow(root, "texts", texts.assign(title="", text_truncated=False))
    write_arrow(root, "candidates", pd.concat(pairs, ignore_index=True))


@pytest.fixture(scope="module")
def verify_lexicon(tmp_path_factory) -> Path:
    from parascout.udfs.lexicon.lexicon import write_lexicon
    from tests.support.verify_sites import LEXICON

    folder = tmp_path_factory.mktemp("lexicon") / "eng-deu"
    write_lexicon(LEXICON, folder)
    return folder


def verify_pairs_argv(root: Path, lexicon: Path) -> list[str]:
    return ["--root", str(root), "--lexicon", str(lexicon), "--random-pairs", "40"]


@pytest.fixture(scope="module")
def verify_pairs_undisturbed(tmp_path_factory, verify_lexicon):
    root = tmp_path_factory.mktemp("verify-pairs-undisturbed")
    write_verify_inputs(root)
    report = run_job("parascout.jobs.verify_pairs", verify_pairs_argv(root, verify_lexicon), root / "job.log")[0]
    assert_not_empty(root, ("verified_pairs",))
    assert report["kept"] == 12 * VERIFY_HOSTS, report  # every host's translations found: the runs are worth comparing
    return root, report


@pytest.mark.parametrize("lost", ["python-worker", "executor"])
def test_verify_pairs_gives_the_same_tables_after_a_lost_process(tmp_path, verify_lexicon, verify_pairs_undisturbed,
                                                                 lost):
    """verify-pairs computes each host's features in Python workers (cogroup applyInPandas, persisted), fits its
    decision on the driver and decides per host in Python workers: a worker or executor lost mid-task gives the same
    verified pairs and the same self labels."""
    write_verify_inputs(tmp_path)
    chooser = BusyPythonWorker(executor=lost == "executor")
    report, killed = run_job("parascout.jobs.verify_pairs", verify_pairs_argv(tmp_path, verify_lexicon),
                             tmp_path / "job.log", lambda pid: Watcher(pid, chooser))
    assert_lost(killed, lost, tmp_path / "job.log")
    assert_same_run(tmp_path, report, *verify_pairs_undisturbed, ("verified_pairs",))
