"""udfs/common/storage.py, range_reads.py and locks.py: locations kept under their prefix, regular files only, verified
range responses, whole files streamed as retried ranges, directory sync, one S3 client factory with the endpoint as a
parameter, writer locks."""
from __future__ import annotations

import io
import json
import os
import time

import boto3
import pytest

from parascout.udfs.common import locks, range_reads, storage
from parascout.udfs.common.range_reads import RangeReader, ReadError, ReadSettings, verified_range
from parascout.udfs.common.storage import BadLocation, resolve_under


def test_names_are_resolved_under_their_prefix(tmp_path):
    (tmp_path / "warc").mkdir()
    (tmp_path / "warc" / "out").symlink_to(tmp_path)
    assert resolve_under(str(tmp_path / "warc"), "/crawl-data/a.warc.gz") == f"{tmp_path}/warc/crawl-data/a.warc.gz"
    assert resolve_under("s3://commoncrawl/", "crawl-data/a.gz") == "s3://commoncrawl/crawl-data/a.gz"
    assert resolve_under("", "../anything") == "../anything"  # no prefix: the name is the path
    for name in ("../x", "a/../../x", "a\\..\\x", "out/secret", "a\x00b"):
        with pytest.raises(BadLocation):
            resolve_under(str(tmp_path / "warc"), name)
    with pytest.raises(BadLocation):
        resolve_under("https://data.commoncrawl.org/", "crawl-data/../../etc/passwd")


def test_only_regular_files_are_opened(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(BadLocation):
        storage.open_regular_file(str(tmp_path / "pipe"))  # would block forever with a plain open()
    with pytest.raises(BadLocation):
        storage.open_regular_file(str(tmp_path))
    with pytest.raises(ReadError) as error:
        RangeReader().read(str(tmp_path / "pipe"), 0, 10)
    assert error.value.reason == "bad_location"
    (tmp_path / "f").write_bytes(b"0123456789")
    assert RangeReader().read(str(tmp_path / "f"), 3, 4) == (b"3456", 1)


def test_range_responses_are_verified():
    body = io.BytesIO
    assert verified_range(206, "bytes 10-14/100", 5, body(b"abcde"), 10, 5) == b"abcde"
    assert verified_range(206, "bytes 98-99/100", 2, body(b"yz"), 98, 5) == b"yz"  # the file ends early
    whole = bytes(range(100))
    assert verified_range(200, None, 100, body(whole), 10, 5) == whole[10:15]  # Range ignored: sliced
    assert verified_range(200, None, None, body(whole), 98, 5) == whole[98:]
    for status, content_range, data in [(206, "bytes 0-4/100", b"abcde"),  # another offset's bytes
                                        (206, None, b"abcde"),  # no Content-Range
                                        (206, "bytes 10-14/100", b"abc"),  # cut short, no length to check
                                        (200, None, whole[:12]),  # whole object cut short
                                        (302, None, b"")]:
        with pytest.raises(ReadError) as error:
            verified_range(status, content_range, 100 if status == 200 else None, body(data), 10, 5)
        assert error.value.reason == "retry"


def test_stream_reads_a_whole_file_in_ranges(tmp_path):
    class Chunked(RangeReader):
        def __init__(self):
            super().__init__(ReadSettings())
            self.calls = []

        def read(self, path, start, length):
            self.calls.append(start)
            data = (tmp_path / "f").read_bytes()[start:start + length]
            return data, 1

    (tmp_path / "f").write_bytes(bytes(range(256)) * 10)
    reader = Chunked()
    chunks = list(RangeReader.stream(reader, "s3://bucket/f", chunk_bytes=1000))
    assert b"".join(chunks) == bytes(range(256)) * 10 and reader.calls == [0, 1000, 2000]


def test_directories_sync_both_ways_and_reads_take_the_endpoint_as_a_parameter(tmp_path, moto_endpoint):
    assert "AWS_ENDPOINT_URL" not in os.environ
    boto3.client("s3", endpoint_url=moto_endpoint).create_bucket(Bucket="sync")
    source = tmp_path / "model"
    (source / "sub").mkdir(parents=True)
    (source / "a.json").write_text("{}")
    (source / "sub" / "b.bin").write_bytes(b"\x00" * 3000)
    assert storage.upload_dir(source, "s3://sync/models/m1", moto_endpoint) == 2
    assert storage.list_files("s3://sync/models/m1", endpoint=moto_endpoint) == [
        "s3://sync/models/m1/a.json", "s3://sync/models/m1/sub/b.bin"]
    assert storage.download_dir("s3://sync/models/m1", tmp_path / "copy", moto_endpoint) == 2
    assert (tmp_path / "copy" / "sub" / "b.bin").read_bytes() == b"\x00" * 3000
    assert storage.object_size("s3://sync/models/m1/sub/b.bin", moto_endpoint) == 3000
    with range_reads.open_binary("s3://sync/models/m1/sub/b.bin", moto_endpoint) as stream:
        assert stream.read() == b"\x00" * 3000
    reader = RangeReader(ReadSettings(endpoint=moto_endpoint))
    assert reader.read("s3://sync/models/m1/sub/b.bin", 2990, 100) == (b"\x00" * 10, 1)
    with pytest.raises(ReadError) as error:
        reader.read("s3://sync/models/none", 0, 10)
    assert error.value.reason == "missing_file" and error.value.attempts == 1
    assert "AWS_ENDPOINT_URL" not in os.environ


def test_a_lock_has_one_holder_at_a_time_on_local_disk_and_on_s3(tmp_path, moto_endpoint):
    boto3.client("s3", endpoint_url=moto_endpoint).create_bucket(Bucket="locks")
    for path, endpoint in ((str(tmp_path / "_locks" / "writer.lock"), None),
                           ("s3://locks/root/_locks/writer.lock", moto_endpoint)):
        with locks.exclusive_lock(path, {"job": "first"}, endpoint=endpoint):
            with pytest.raises(locks.LockHeld) as held, locks.exclusive_lock(
                    path, {"job": "second"}, wait_seconds=0.2, poll_seconds=0.05, endpoint=endpoint):
                pass
            assert held.value.holder["job"] == "first" and held.value.holder["pid"] == os.getpid()
        with locks.exclusive_lock(path, {"job": "third"}, endpoint=endpoint):  # released at the block's end
            pass
    with pytest.raises(locks.UnlockableRoot), locks.exclusive_lock("gs://bucket/root/_locks/writer.lock", {}):
        pass  # tests/pipeline/test_s3_root_faults.py: refused unless one writer at a time is promised


def test_an_s3_lock_is_a_lease_renewed_while_held_and_taken_over_once_expired(moto_endpoint):
    client = boto3.client("s3", endpoint_url=moto_endpoint)
    client.create_bucket(Bucket="leases")
    path = "s3://leases/root/_locks/writer.lock"

    def body() -> dict:
        return json.loads(client.get_object(Bucket="leases", Key="root/_locks/writer.lock")["Body"].read())

    with locks.exclusive_lock(path, {"job": "long"}, endpoint=moto_endpoint, lease_seconds=0.9) as holder:
        first = body()["expires_at"]
        time.sleep(1.5)  # past the first lease: renewed, so still held
        assert body()["expires_at"] > first and "lost" not in holder
        with pytest.raises(locks.LockHeld), locks.exclusive_lock(path, {"job": "second"}, endpoint=moto_endpoint):
            pass
    assert client.list_objects_v2(Bucket="leases").get("KeyCount", 0) == 0  # released

    crashed = {"job": "crashed", "pid": 1, "expires_at": time.time() - 1}  # a killed run's lock, lease run out
    client.put_object(Bucket="leases", Key="root/_locks/writer.lock", Body=json.dumps(crashed).encode())
    with locks.exclusive_lock(path, {"job": "next"}, endpoint=moto_endpoint) as holder:
        assert holder.get("took_over") and body()["job"] == "next"
    legacy = {"job": "old", "pid": 1}  # written without a lease: held until someone deletes it
    client.put_object(Bucket="leases", Key="root/_locks/writer.lock", Body=json.dumps(legacy).encode())
    with pytest.raises(locks.LockHeld, match="old"), locks.exclusive_lock(path, {"job": "x"}, endpoint=moto_endpoint):
        pass
    client.delete_object(Bucket="leases", Key="root/_locks/writer.lock")


def test_an_s3_lease_taken_over_marks_its_holder_lost_and_keeps_the_new_holders_lock(moto_endpoint):
    client = boto3.client("s3", endpoint_url=moto_endpoint)
    client.create_bucket(Bucket="lost-leases")
    key, path = "root/_locks/writer.lock", "s3://lost-leases/root/_locks/writer.lock"
    with locks.exclusive_lock(path, {"job": "stalled"}, endpoint=moto_endpoint, lease_seconds=0.6) as holder:
        client.put_object(Bucket="lost-leases", Key=key, Body=json.dumps({"job": "usurper"}).encode())  # taken over
        time.sleep(0.5)  # the next renewal finds another object
        assert holder.get("lost")
    assert json.loads(client.get_object(Bucket="lost-leases", Key=key)["Body"].read())["job"] == "usurper"
