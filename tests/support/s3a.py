"""Hadoop's S3A for the shared test session: hadoop-aws and the AWS SDK that `make s3a-jars` puts in .venv/s3a-jars,
so a job's own Spark writes to an s3:// root reach a local S3 server as they reach S3 on a cluster.

The jars are hadoop-aws 3.3.1 (AWS SDK v1), the newest on PyPI, beside PySpark's Hadoop 3.5: its defaults
read as numbers what Hadoop 3.5 writes as durations ("60s"), and its credential providers are the SDK v1 ones, so
the session sets those keys here, with the local server's keys. Retries are few and short: a fault a test injects on every try surfaces in
seconds, not after S3A's twenty."""
from __future__ import annotations

from pathlib import Path

import pytest

from parascout.udfs.common import storage

JARS = Path(__file__).resolve().parents[2] / ".venv" / "s3a-jars"

PROPERTIES = {
    "spark.hadoop.fs.s3a.threads.keepalivetime": "60",
    "spark.hadoop.fs.s3a.multipart.purge.age": "86400",
    "spark.hadoop.fs.s3a.connection.timeout": "20000",
    "spark.hadoop.fs.s3a.connection.establish.timeout": "5000",
    "spark.hadoop.fs.s3a.connection.request.timeout": "0",
    "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    # the local server takes any key; the JVM's environment is fixed when it starts, before a test sets AWS_*
    "spark.hadoop.fs.s3a.access.key": "testing",
    "spark.hadoop.fs.s3a.secret.key": "testing",
    "spark.hadoop.fs.s3a.attempts.maximum": "2",  # the SDK's own tries
    "spark.hadoop.fs.s3a.retry.limit": "2",
    "spark.hadoop.fs.s3a.retry.interval": "10ms",
    "spark.hadoop.fs.s3a.retry.throttle.limit": "2",
    "spark.hadoop.fs.s3a.retry.throttle.interval": "10ms",
    "spark.hadoop.fs.s3a.multipart.size": "5242880",  # S3's smallest part: a 12 MB table file goes in parts
    "spark.hadoop.fs.s3a.multipart.threshold": "5242880",
}


def jars() -> list[str]:
    """The S3A jars' paths, [] where `make s3a-jars` has not put them in place."""
    return sorted(str(jar) for jar in JARS.glob("*.jar")) if (JARS / ".fetched").exists() else []


def session_properties() -> dict[str, str]:
    """What the shared session adds for S3A: the jars on the driver's classpath (local mode: the executors' too)
    and PROPERTIES; nothing without the jars."""
    found = jars()
    return {"spark.driver.extraClassPath": ":".join(found), **PROPERTIES} if found else {}


def require_s3a(spark) -> None:
    """Skip, saying why, where the session has no S3A."""
    if spark.sparkContext._jsc.hadoopConfiguration().getClassByNameOrNull(storage.S3A_FILESYSTEM) is None:
        pytest.skip(f"hadoop-aws not found in {JARS} (make s3a-jars): Spark cannot write an s3:// root here")
