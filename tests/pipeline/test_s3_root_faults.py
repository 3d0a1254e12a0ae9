"""A dataset root on S3 under faults: a real S3 server (moto's) behind the fault proxy (tests/support/s3_faults.py), which
throttles, fails multipart uploads and cuts connections while a job writes its root. Whatever happens, the job
ends done or with an error that names the fault, the root reads as its last complete version (the project's table
reader and pyarrow), nothing half-written is visible, and a rerun without faults succeeds. A gs:// root, which
parascout cannot lock, is refused for writing unless the user promises one writer at a time."""
from __future__ import annotations

import json
import os
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from parascout.jobs.align import AlignJob
from parascout.udfs.common import locks, storage, table_layout
from tests.support.s3_faults import FaultProxy, OperationFault, keys, unfinished_uploads

#: every operation a job's writes to its root make
WRITES = ("PUT", "GET", "LIST", "HEAD", "COPY", "DELETE", "CREATE_MULTIPART", "UPLOAD_PART", "COMPLETE_MULTIPART")
URLS = [("en", f"https://www.site{n}.is/en/page-{k}.html") for n in range(3) for k in range(20)]
URLS += [("is", f"https://www.site{n}.is/is/page-{k}.html") for n in range(3) for k in range(20)]


def run_align(tmp_path, root: str) -> dict:
    """align (no Spark: its writes are the root's writer lock, its output file and its report) onto an s3:// root."""
    listing = tmp_path / "urls.tsv"
    listing.write_text("".join(f"{lang}\t{url}\n" for lang, url in URLS))
    return AlignJob().run([str(listing), f"{root}/aligned.tsv", "--src-lang", "en", "--trg-lang", "is",
                           "--root", root, "--log-level", "WARNING"])


def assert_root_done(endpoint: str, bucket: str) -> None:
    """align's output and report are there whole, the lock is released, no temporary file is left."""
    found = keys(endpoint, bucket)
    assert "root/aligned.tsv" in found and "root/_reports/align.json" in found
    assert not any("/_locks/" in key or storage.TEMPORARY_PREFIX in key for key in found), found
    assert not unfinished_uploads(endpoint, bucket)
    lines = storage.read_text(f"s3://{bucket}/root/aligned.tsv").splitlines()
    report = json.loads(storage.read_text(f"s3://{bucket}/root/_reports/align.json"))
    assert report["status"] == "ok" and report["kept"] == len(URLS) and len(lines) == len(URLS) // 2


def test_a_job_on_a_throttled_s3_root_succeeds_and_one_never_let_through_fails_naming_the_throttling(
        tmp_path, moto_endpoint, bucket, through):
    root = f"s3://{bucket}/root"
    # a quarter of every operation throttled, each request at most twice: within the 3 tries botocore and pyarrow
    # make (a request throttled 3 times fails the job, as below)
    rules = tuple(OperationFault(operation, "slowdown", share=0.25) for operation in WRITES)
    with FaultProxy(moto_endpoint, operations=rules, seed=5, max_faults_per_request=2) as proxy:
        through(proxy.endpoint)
        run_align(tmp_path, root)
    assert sum(proxy.operation_faults.values()) >= 5, proxy.operation_faults
    through(moto_endpoint)
    assert_root_done(moto_endpoint, bucket)

    storage.delete_dir(root)
    with FaultProxy(moto_endpoint, operations=(OperationFault("PUT", "slowdown"),)) as proxy:  # every PUT
        through(proxy.endpoint)
        with pytest.raises(Exception, match="SlowDown|reduce your request rate") as raised:
            run_align(tmp_path, root)
    assert "Traceback" not in str(raised.value)
    through(moto_endpoint)
    assert not [key for key in keys(moto_endpoint, bucket) if key.startswith("root/") and key != "root/"]
    run_align(tmp_path, root)  # without faults: done
    assert_root_done(moto_endpoint, bucket)


@pytest.mark.parametrize("operation", ["UPLOAD_PART", "COMPLETE_MULTIPART"])
def test_a_failed_multipart_upload_fails_naming_the_store_error_and_leaves_nothing(
        moto_endpoint, bucket, through, operation):
    """A file of a job's root written in parts (here 12 MB, above pyarrow's part size), whose parts or completion
    the store refuses every time: the error raised is the store's (not the missing temporary file's), no object
    and no unfinished upload is left, and the same write without faults succeeds."""
    path, data = f"s3://{bucket}/root/bitext/eng-isl.sent.gz", os.urandom(12 << 20)
    with FaultProxy(moto_endpoint, operations=(OperationFault(operation, "error"),)) as proxy:
        through(proxy.endpoint)
        with pytest.raises(OSError, match="InternalError|internal error|500"), storage.open_output(path) as out:
            out.write(data)
    assert proxy.operation_faults[operation, "error"] >= 1
    through(moto_endpoint)
    assert [key for key in keys(moto_endpoint, bucket) if not key.endswith("/")] == []
    assert unfinished_uploads(moto_endpoint, bucket) == []
    with storage.open_output(path) as out:
        out.write(data)
    assert storage.object_size(path) == len(data)


def write_version(root: str, version: str, rows: int) -> str:
    """A complete version of table `urls` under the root, as a job leaves it before the switch."""
    table_dir = storage.join(root, "urls")
    filesystem, inner = storage.arrow_filesystem(table_layout.version_path(table_dir, version))
    filesystem.create_dir(inner, recursive=True)
    pq.write_table(pa.table({"url": [f"https://a.is/{version}/{n}" for n in range(rows)]}),
                   f"{inner}/part-00000.parquet", filesystem=filesystem)
    storage.write_text(storage.join(table_layout.version_path(table_dir, version), "_SUCCESS"), "")
    return table_dir


def read_urls(table_dir: str) -> list[str]:
    """The table's rows as a reader gets them: the project's table_location, then pyarrow."""
    filesystem, inner = storage.arrow_filesystem(table_layout.table_location(table_dir))
    return pq.read_table(inner, filesystem=filesystem).column("url").to_pylist()


@pytest.mark.parametrize("fault", ["drop", "slowdown"])
def test_a_connection_cut_during_the_switch_leaves_the_last_complete_version(moto_endpoint, bucket, through, fault):
    """The switch readers see is the manifest's move into place (a copy on S3): cut every copy, or throttle it
    past the retries, and the manifest write fails with the store's error while the table still reads as its
    last complete version; the switch rerun without faults reads as the new one."""
    through(moto_endpoint)
    root = f"s3://{bucket}/root"
    table_dir = write_version(root, "v1", 3)
    table_layout.write_manifest(table_dir, "v1", rows=3)
    write_version(root, "v2", 5)
    with FaultProxy(moto_endpoint, operations=(OperationFault("COPY", fault),)) as proxy:
        through(proxy.endpoint)
        with pytest.raises(OSError, match="CopyObject|SlowDown|NETWORK"):
            table_layout.write_manifest(table_dir, "v2", rows=5)
    through(moto_endpoint)
    assert table_layout.read_manifest(table_dir)["version"] == "v1" and table_layout.table_problem(table_dir) is None
    assert read_urls(table_dir) == [f"https://a.is/v1/{n}" for n in range(3)]
    assert not [key for key in keys(moto_endpoint, bucket) if storage.TEMPORARY_PREFIX in key]
    table_layout.write_manifest(table_dir, "v2", rows=5)
    assert len(read_urls(table_dir)) == 5


def test_a_lock_write_whose_answer_is_lost_still_holds_the_lock(moto_endpoint, bucket, through):
    """The connection cut after the store applied the lock's conditional create (and later a renewal): the
    retry's condition fails on the holder's own object, which the lease id tells apart, so the job keeps its lock
    instead of finding itself busy, or lost."""
    path = f"s3://{bucket}/root/_locks/writer.lock"
    rules = (OperationFault("PUT", "drop_after", key="_locks", times=2),)  # the create, then the first renewal
    with FaultProxy(moto_endpoint, operations=rules) as proxy:
        through(proxy.endpoint)
        with locks.exclusive_lock(path, {"job": "align"}, lease_seconds=0.9) as holder:
            time.sleep(1.0)  # past the first renewal (every third of the lease)
            assert "lost" not in holder
            with pytest.raises(locks.LockHeld), locks.exclusive_lock(path, {"job": "second"}):
                pass
    assert proxy.operation_faults["PUT", "drop_after"] == 2
    assert keys(moto_endpoint, bucket) == []  # released


def test_a_gs_root_is_refused_for_writing_unless_one_writer_is_promised(tmp_path):
    path = "gs://bucket/root/_locks/writer.lock"
    with pytest.raises(locks.UnlockableRoot, match="cannot lock gs://.*pass --unlocked-root"), \
            locks.exclusive_lock(path, {"job": "align"}):
        pass
    with pytest.raises(locks.UnlockableRoot, match="gs://bucket/root at once"):
        run_align(tmp_path, "gs://bucket/root")
    with pytest.raises(locks.LockUnsupported), locks.exclusive_lock(path, {"job": "align"}, unlocked_ok=True):
        pass  # the job warns and runs unlocked
    job = AlignJob()  # a job given --unlocked-root takes no lock and runs on (no GCS server here to run it on)
    job.args = job.parse_arguments([str(tmp_path / "urls.tsv"), "gs://bucket/root/aligned.tsv", "--src-lang", "en",
                                    "--trg-lang", "is", "--root", "gs://bucket/root", "--unlocked-root"])
    with job.writer_lock():
        assert job.lock_holder == {}
