"""parascout's Java UDFs: where their jar is, and registering them in a session that can load it.

`make jar` compiles jvm/src/main/java/parascout/ into udfs/parascout-udfs.jar (the wheel carries it);
jobs put it in spark.jars (jobs/spark_session.py) and clusters get it with `spark-submit --jars`. Without a JDK
the jar is absent and every caller falls back to a slower Spark expression or pandas UDF.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path

JVM_JAR = Path(__file__).resolve().parent.parent / "parascout-udfs.jar"  # udfs/, where `make jar` writes it

log = logging.getLogger("parascout.jvm")


def jvm_jar_path() -> str | None:
    """The jar of parascout's Java UDFs, for spark.jars or `spark-submit --jars`; None when not built."""
    return str(JVM_JAR) if JVM_JAR.is_file() else None


def java_function_available(spark, function: str, class_name: str, what: str, fallback: str,
                            return_type: str = "string") -> bool:
    """Whether `spark` can call the Java UDF `class_name` (returning `return_type`, a DDL type) as `function`:
    registers it once per session, False when the class is not on the driver's classpath (no jar in
    spark.jars). Logs the path taken once."""
    from pyspark.errors import AnalysisException

    if spark.catalog.functionExists(function):
        return True
    try:
        spark.udf.registerJavaFunction(function, class_name, return_type)
        available, path = True, f"the Java UDF {class_name}"
    except AnalysisException as error:  # "Can not load class ...": the jar is not in spark.jars
        available, path = False, f"{fallback} ({str(error)[:200]})"
    _log_once(f"{what} on the JVM: {path}")
    return available


@functools.cache
def _log_once(message: str) -> None:
    log.info(message)
