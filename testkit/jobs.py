"""Running a job in a session the caller owns (a test's shared session, a benchmark's own)."""
from __future__ import annotations


def run_job(job_class, spark, argv: list[str]) -> dict:
    """Run a job inside the given session and return its report."""
    return job_class().use_spark(spark).run(argv)
