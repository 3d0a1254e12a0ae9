"""Paths and bytes on local disk, file://, s3:// and https:// — no SparkSession here.

Small files (reports, markers) and pandas-written tables go through pyarrow.fs;
whole archive files stream through `open_binary` (boto3 on s3://, requests on
https://); byte ranges of them (CDX blocks, WARC records, Parquet footers) are
read by udfs.warc_fetch.RangeReader. boto3 honours AWS_ENDPOINT_URL, which is
how tests point it at a moto server on 127.0.0.1.
"""
from __future__ import annotations

import functools
import os
import uuid
from urllib.parse import urlsplit


def scheme(path: str) -> str:
    return urlsplit(path).scheme if "://" in path else ""


def join(root: str, *parts: str) -> str:
    return "/".join([root.rstrip("/"), *[p.strip("/") for p in parts]])


def is_local(path: str) -> bool:
    return scheme(path) in ("", "file")


def local_path(path: str) -> str:
    return urlsplit(path).path if path.startswith("file://") else path


def to_hadoop(path: str) -> str:
    """A path Hadoop's FileSystem understands (local paths made absolute)."""
    return os.path.abspath(path) if scheme(path) == "" else path


def _arrow_fs(path: str):
    from pyarrow import fs

    if is_local(path):
        return fs.LocalFileSystem(), os.path.abspath(local_path(path))
    uri = path.replace("s3a://", "s3://", 1).replace("s3n://", "s3://", 1)
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    if uri.startswith("s3://") and endpoint:
        parts = urlsplit(endpoint)
        filesystem = fs.S3FileSystem(endpoint_override=parts.netloc, scheme=parts.scheme or "http",
                                     region=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"))
        return filesystem, uri[len("s3://"):]
    return fs.FileSystem.from_uri(uri)


def exists(path: str) -> bool:
    from pyarrow import fs

    filesystem, inner = _arrow_fs(path)
    return filesystem.get_file_info(inner).type != fs.FileType.NotFound


def read_text(path: str) -> str:
    filesystem, inner = _arrow_fs(path)
    with filesystem.open_input_stream(inner) as handle:
        return handle.read().decode("utf-8")


def write_text(path: str, text: str) -> None:
    """Write a small text file; locally via a temporary name and rename (atomic)."""
    filesystem, inner = _arrow_fs(path)
    parent = inner.rsplit("/", 1)[0]
    filesystem.create_dir(parent, recursive=True)
    temporary = f"{parent}/.tmp-{uuid.uuid4().hex[:8]}"
    with filesystem.open_output_stream(temporary) as handle:
        handle.write(text.encode("utf-8"))
    filesystem.move(temporary, inner)


def delete_dir(path: str) -> None:
    from pyarrow import fs

    filesystem, inner = _arrow_fs(path)
    if filesystem.get_file_info(inner).type != fs.FileType.NotFound:
        filesystem.delete_dir(inner)


def write_parquet_table(frame, path: str, partition_by: list[str] | None = None) -> None:
    """Write a pandas DataFrame as a Parquet folder with _SUCCESS, atomically (temp folder, rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    filesystem, inner = _arrow_fs(path)
    parent = inner.rsplit("/", 1)[0]
    temporary = f"{parent}/_tmp/{inner.rsplit('/', 1)[1]}-{uuid.uuid4().hex[:8]}"
    table = pa.Table.from_pandas(frame, preserve_index=False)
    filesystem.create_dir(temporary, recursive=True)
    if partition_by:
        pq.write_to_dataset(table, temporary, partition_cols=partition_by, filesystem=filesystem)
    else:
        pq.write_table(table, f"{temporary}/part-00000.parquet", filesystem=filesystem)
    with filesystem.open_output_stream(f"{temporary}/_SUCCESS"):
        pass
    if filesystem.get_file_info(inner).type.name != "NotFound":
        filesystem.delete_dir(inner)
    filesystem.move(temporary, inner)


# ---- archive bytes ----------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def s3_client():
    """A boto3 S3 client with adaptive retries (backs off on 503 SlowDown); one per process."""
    import boto3
    from botocore.config import Config

    config = Config(retries={"max_attempts": 8, "mode": "adaptive"}, max_pool_connections=16)
    return boto3.client("s3", config=config)


def _bucket_key(path: str) -> tuple[str, str]:
    parts = urlsplit(path)
    return parts.netloc, parts.path.lstrip("/")


def open_binary(path: str):
    """A readable binary file object for a whole local, s3:// or https:// file."""
    kind = scheme(path)
    if kind in ("", "file"):
        return open(local_path(path), "rb")
    if kind in ("s3", "s3a", "s3n"):
        bucket, key = _bucket_key(path)
        return s3_client().get_object(Bucket=bucket, Key=key)["Body"]
    if kind in ("http", "https"):
        import requests

        response = requests.get(path, stream=True, timeout=60)
        response.raise_for_status()
        response.raw.decode_content = False
        return response.raw
    raise ValueError(f"unsupported path scheme {kind!r} in {path}")


def list_files(path: str, suffix: str = "") -> list[str]:
    """Files under a local or s3:// folder (or the path itself when it is a file), sorted."""
    kind = scheme(path)
    if kind in ("", "file"):
        base = local_path(path)
        if os.path.isfile(base):
            return [path]
        found = []
        for folder, _, names in os.walk(base):
            found.extend(os.path.join(folder, n) for n in names if n.endswith(suffix))
        return sorted(found)
    if kind in ("s3", "s3a", "s3n"):
        bucket, prefix = _bucket_key(path)
        paginator = s3_client().get_paginator("list_objects_v2")
        keys = [obj["Key"] for page in paginator.paginate(Bucket=bucket, Prefix=prefix)
                for obj in page.get("Contents", []) if obj["Key"].endswith(suffix)]
        return sorted(f"{kind}://{bucket}/{key}" for key in keys)
    return [path]
