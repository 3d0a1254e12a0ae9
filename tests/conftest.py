"""Shared fixtures: one local SparkSession for the whole suite, real data from ../shared."""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from testkit.jobs import run_job  # noqa: F401  (tests import it from here)

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("PARASCOUT_SHARED_DATA", REPO.parent / "shared" / "data"))

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("PARASCOUT_STRICT_TABLES", "1")  # a written column the table registry does not know fails
# the local S3 server's keys, in the environment before the shared session's JVM (and its Python workers) start
for _key, _value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                     ("AWS_DEFAULT_REGION", "us-east-1")):
    os.environ.setdefault(_key, _value)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: Spark-heavy or end-to-end tests (still run in CI)")


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession (UI off, few shuffle partitions, the Java UDFs' jar where built, Hadoop's S3A where
    fetched) shared by every test."""
    from pyspark.sql import SparkSession

    from parascout.udfs.common.jvm import jvm_jar_path
    from tests.support.s3a import session_properties

    builder = SparkSession.builder.config("spark.jars", jvm_jar_path()) if jvm_jar_path() else SparkSession.builder
    for key, value in session_properties().items():  # Hadoop's S3A where `make s3a-jars` fetched it
        builder = builder.config(key, value)
    session = (
        builder.master("local[2]")
        .appName("parascout-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (real WMT16 pairs, real CommonCrawl excerpts); skip where absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA} (set PARASCOUT_SHARED_DATA); "
                    "these tests need the WMT16 pairs and CommonCrawl excerpts from ../shared/data")
    return SHARED_DATA


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict:
    """rank-pairs' URL models (url2lang and pairs) trained on its test archive's URLs."""
    from tests.support.rank_pairs import train_models

    return train_models(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """The replay's sample sites: (root with docs, truth and shortlist, expected counts)."""
    from tests.support.replay import write_dataset

    return write_dataset(tmp_path_factory.mktemp("replay"))


@pytest.fixture(scope="module")
def planned(spark, dataset, tmp_path_factory):
    """The replay's sample sites replayed and planned: (root, docs, truth, replay report, plan report)."""
    from tests.support.replay import plan_crawl

    return plan_crawl(spark, dataset[0], tmp_path_factory.mktemp("crawl-plan"))


@pytest.fixture(scope="session")
def moto_endpoint():
    """A real S3-compatible server (moto's server mode) on 127.0.0.1, shared by the S3 tests."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    yield "http://{}:{}".format(*server.get_host_and_port())
    server.stop()


@pytest.fixture
def bucket(moto_endpoint, request) -> str:
    """A new bucket on the moto server per test (and parameter)."""
    import boto3

    name = f"root-{hashlib.sha1(request.node.name.encode()).hexdigest()[:12]}"
    boto3.client("s3", endpoint_url=moto_endpoint).create_bucket(Bucket=name)
    return name


@pytest.fixture
def through(monkeypatch):
    """Point every S3 client parascout makes (pyarrow's and boto3's, resolved from AWS_ENDPOINT_URL, and a job's
    Spark side, which prepare_spark sets from it) at an endpoint: a fault proxy or moto itself."""
    from parascout.udfs.common import storage

    def use(endpoint: str) -> None:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        storage.s3_client.cache_clear()

    yield use
    storage.s3_client.cache_clear()
