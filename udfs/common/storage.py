"""Paths, clients and files on local disk, file://, s3:// and gs://: the file API the rest of parascout's I/O builds on.

- Tables and small files (reports, markers) go through pyarrow.fs (`exists`, `read_text`, `write_text`,
  `write_parquet_table`), written under a temporary name and moved into place (`open_output`); folders of
  objects are copied by `upload_dir` / `download_dir`.
- Locations named by index lines are untrusted: `resolve_under` keeps a file name under its prefix
  (`..` and symlinks included) and only regular files are opened (a FIFO never blocks a task).

S3 clients come from one factory, `s3_client(endpoint, ...)`; the endpoint is a parameter (None: boto3's
own resolution, AWS_ENDPOINT_URL included), never set in the driver's environment by parascout. Spark's side of a
root (Hadoop's S3A, the Python tasks' environment) is set up by `prepare_spark` to reach the same store.

Two modules build on this one: `range_reads` reads archive bytes as verified, retried byte ranges, and `locks`
holds a dataset root's writer lock. Together they are the one owner of I/O (clients, verified range reads,
retries, path resolution, sync); the rest of parascout imports no boto3, pyarrow.fs or urllib of its own.

Why one module: every path, whatever its scheme, is resolved and opened here, so the schemes parascout
supports are the ones this module knows.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
import uuid
from pathlib import Path
from urllib.parse import unquote, urlsplit

S3_SCHEMES = ("s3", "s3a", "s3n")
HTTP_SCHEMES = ("http", "https")


# ---- paths -------------------------------------------------------------------------------
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


def bucket_key(path: str) -> tuple[str, str]:
    """s3://bucket/key -> (bucket, key)."""
    parts = urlsplit(path)
    return parts.netloc, parts.path.lstrip("/")


class BadLocation(ValueError):
    """A file name that leaves its prefix, or names something that is not a regular file."""


def resolve_under(prefix: str, name: str) -> str:
    """PREFIX + name (one slash between), refusing names that leave the prefix on any scheme: a `..` segment
    anywhere, percent-encoded or not, and for local prefixes any path whose real location (symlinks
    resolved) is outside the prefix's."""
    if not prefix:
        return name
    if any(any(part == ".." for part in re.split(r"[/\\]", form)) or "\x00" in form for form in _decodings(name)):
        raise BadLocation(f"{name!r} leaves the prefix {prefix}")
    joined = f"{prefix.rstrip('/')}/{name.lstrip('/')}"
    if is_local(prefix):
        root = os.path.realpath(local_path(prefix))
        real = os.path.realpath(local_path(joined))
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            raise BadLocation(f"{name!r} resolves to {real}, outside {root}")
    return joined


def _decodings(name: str, rounds: int = 3) -> list[str]:
    """The name and its percent-decodings, once and again: an HTTP server (or a proxy before it) decodes
    `%2e%2e%2f` into `../`, some twice (`%252e`); every form must stay under the prefix."""
    forms = [name]
    for _ in range(rounds):
        decoded = unquote(forms[-1])
        if decoded == forms[-1]:
            break
        forms.append(decoded)
    return forms


def open_regular_file(path: str):
    """A local file opened for reading, only when it is a regular file (a FIFO or a device would block or never
    end: BadLocation). Opened non-blocking, checked on the open descriptor, then switched back to blocking."""
    descriptor = os.open(local_path(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise BadLocation(f"{path} is not a regular file")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


# ---- clients -----------------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def s3_client(endpoint: str | None = None, connect_timeout: float = 10.0, read_timeout: float = 60.0,
              pool_size: int = 16, retry_attempts: int = 3):
    """The one boto3 S3 client factory, cached per settings. Range reads ask for retry_attempts=1 (their
    retries are RangeReader's loop); listing, HEAD and directory sync keep botocore's standard retries."""
    import boto3
    from botocore.config import Config

    config = Config(retries={"mode": "standard", "total_max_attempts": retry_attempts},
                    max_pool_connections=max(pool_size, 10), connect_timeout=connect_timeout,
                    read_timeout=read_timeout)
    return boto3.client("s3", endpoint_url=endpoint or None, config=config)


def s3_endpoint() -> str | None:
    """The S3-compatible endpoint the environment names for every S3 client (AWS_ENDPOINT_URL: MinIO, Ceph, a
    local server), None for AWS's own."""
    return os.environ.get("AWS_ENDPOINT_URL") or None


def arrow_filesystem(path: str, endpoint: str | None = None):
    """(pyarrow filesystem, path inside it) for a local, file://, s3:// or gs:// path."""
    from pyarrow import fs

    if is_local(path):
        return fs.LocalFileSystem(), os.path.abspath(local_path(path))
    uri = path.replace("s3a://", "s3://", 1).replace("s3n://", "s3://", 1)
    endpoint = endpoint or (s3_endpoint() if uri.startswith("s3://") else None)
    if uri.startswith("s3://") and endpoint:
        parts = urlsplit(endpoint)
        filesystem = fs.S3FileSystem(endpoint_override=parts.netloc, scheme=parts.scheme or "http",
                                     region=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"))
        return filesystem, uri[len("s3://"):]
    return fs.FileSystem.from_uri(uri)


#: Hadoop's S3 file system (hadoop-aws), which Spark's own reads and writes of s3:// tables go through off EMR
S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"


class HadoopStorageMissing(ValueError):
    """Spark's Hadoop has no file system for a root's scheme: its tables cannot be written there."""


def prepare_spark(spark, path: str) -> None:
    """Set a Spark session up to read and write tables under `path` as parascout's own clients reach it, before
    anything is written. For an s3:// path: the scheme goes to S3A where the cluster maps it to nothing (EMR maps
    it to EMRFS: left alone); the endpoint AWS_ENDPOINT_URL names is the bucket's for S3A too, unless Spark's conf
    names one, and the Python tasks' (their environment is the executors', not the driver's), so a table's files,
    its manifest and the tasks' own files are never split between a local server and AWS. Raises
    HadoopStorageMissing, saying what to add, when Hadoop has no file system for the path's scheme."""
    if is_local(path):
        return
    context = spark.sparkContext
    conf, jvm = context._jsc.hadoopConfiguration(), context._jvm
    path_scheme = scheme(path)
    if path_scheme in S3_SCHEMES:
        if path_scheme != "s3a" and not conf.get(f"fs.{path_scheme}.impl") \
                and conf.getClassByNameOrNull(S3A_FILESYSTEM) is not None:
            conf.set(f"fs.{path_scheme}.impl", S3A_FILESYSTEM)
        bucket, endpoint = bucket_key(path)[0], s3_endpoint()
        if endpoint and not conf.get("fs.s3a.endpoint") and not conf.get(f"fs.s3a.bucket.{bucket}.endpoint"):
            conf.set(f"fs.s3a.bucket.{bucket}.endpoint", endpoint)
            conf.set(f"fs.s3a.bucket.{bucket}.path.style.access", "true")  # what S3-compatible servers answer
            conf.set(f"fs.s3a.bucket.{bucket}.connection.ssl.enabled", str(endpoint.startswith("https")).lower())
        if endpoint:  # the tasks' environment, as Python UDFs made from now on carry it
            context.environment["AWS_ENDPOINT_URL"] = endpoint
    try:
        jvm.org.apache.hadoop.fs.Path(to_hadoop(path)).getFileSystem(conf)
    except Exception as error:  # Py4JJavaError: only a missing file system is a configuration error
        if "UnsupportedFileSystemException" not in str(error) and "ClassNotFoundException" not in str(error):
            raise
        needs = ("hadoop-aws and its AWS SDK on Spark's classpath (EMR's EMRFS has it; elsewhere e.g. "
                 "--packages org.apache.hadoop:hadoop-aws:<Spark's Hadoop version>)" if path_scheme in S3_SCHEMES
                 else "the Cloud Storage connector (Dataproc has it)" if path_scheme == "gs"
                 else f"a Hadoop file system for {path_scheme}://")
        raise HadoopStorageMissing(f"Spark's Hadoop cannot write {path}: no file system for {path_scheme}:// "
                                   f"({java_error(error)}); it needs {needs}") from None


def java_error(error: Exception) -> str:
    """A Py4JJavaError's Java exception line, the class without its package ("AWSClientIOException: copyFile(...)
    ...: Unable to execute HTTP request"), not py4j's "An error occurred while calling o171.rename"."""
    lines = [line.strip().lstrip(": ") for line in str(error).splitlines() if "Exception" in line and ":" in line]
    line = next((line for line in lines if not line.startswith("An error occurred")), str(error).splitlines()[0])
    name, _, message = line.partition(": ")
    return f"{name.rsplit('.', 1)[-1]}: {message}" if message and " " not in name else line


def exists(path: str, endpoint: str | None = None) -> bool:
    from pyarrow import fs

    filesystem, inner = arrow_filesystem(path, endpoint)
    return filesystem.get_file_info(inner).type != fs.FileType.NotFound


def read_text(path: str) -> str:
    filesystem, inner = arrow_filesystem(path)
    with filesystem.open_input_stream(inner) as handle:
        return handle.read().decode("utf-8")


def write_text(path: str, text: str) -> None:
    """Write a small text file; locally via a temporary name and rename (atomic)."""
    with open_output(path) as handle:
        handle.write(text.encode("utf-8"))


@contextlib.contextmanager
def open_output(path: str, compression: str | None = None):
    """A binary output stream to `path` (local, s3://, gs://) written under a temporary name and moved into
    place when the block ends without an error, so a reader never sees a half-written file."""
    filesystem, inner = arrow_filesystem(path)
    parent = inner.rsplit("/", 1)[0]
    filesystem.create_dir(parent, recursive=True)
    temporary = f"{parent}/{TEMPORARY_PREFIX}{uuid.uuid4().hex[:8]}-{inner.rsplit('/', 1)[1]}"
    try:
        with filesystem.open_output_stream(temporary, compression=compression) as handle:
            yield handle
        filesystem.move(temporary, inner)  # on object stores a copy, then a delete
    except BaseException:
        _discard_temporary(filesystem, path, temporary)  # the write's own error is the one raised
        raise


def _discard_temporary(filesystem, path: str, temporary: str) -> None:
    """Best effort, after a failed write: delete its temporary file (absent when the upload failed) and, on S3,
    abort its unfinished multipart uploads (invisible, but stored and billed until aborted)."""
    with contextlib.suppress(OSError):
        filesystem.delete_file(temporary)
    if scheme(path) not in S3_SCHEMES:
        return
    bucket, key = bucket_key(path)[0], temporary.split("/", 1)[1]
    with contextlib.suppress(Exception):
        client = s3_client()
        for upload in client.list_multipart_uploads(Bucket=bucket, Prefix=key).get("Uploads", []):
            client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])


TEMPORARY_PREFIX = ".tmp-"


def file_sizes(folder: str) -> dict[str, int]:
    """{name: bytes} of the files directly in a local, s3:// or gs:// folder ({} when it is absent)."""
    from pyarrow import fs

    filesystem, inner = arrow_filesystem(folder)
    if filesystem.get_file_info(inner).type == fs.FileType.NotFound:
        return {}
    return {info.base_name: info.size for info in filesystem.get_file_info(fs.FileSelector(inner))
            if info.type == fs.FileType.File}


def remove_temporaries(folder: str) -> int:
    """Delete what open_output left under temporary names in a folder (a killed writer's files); how many."""
    filesystem, inner = arrow_filesystem(folder)
    leftovers = [name for name in file_sizes(folder) if name.startswith(TEMPORARY_PREFIX)]
    for name in leftovers:
        filesystem.delete_file(f"{inner}/{name}")
    return len(leftovers)


def delete_file(path: str) -> None:
    """Delete a file when it is there."""
    if exists(path):
        filesystem, inner = arrow_filesystem(path)
        filesystem.delete_file(inner)


def modified_at(path: str):
    """When a file was last written (a UTC datetime), None when it is absent."""
    from pyarrow import fs

    filesystem, inner = arrow_filesystem(path)
    info = filesystem.get_file_info(inner)
    return None if info.type == fs.FileType.NotFound else info.mtime


def delete_dir(path: str) -> None:
    from pyarrow import fs

    filesystem, inner = arrow_filesystem(path)
    if filesystem.get_file_info(inner).type != fs.FileType.NotFound:
        filesystem.delete_dir(inner)


def write_parquet_table(frame, path: str, partition_by: list[str] | None = None) -> None:
    """Write a pandas DataFrame as a Parquet folder with _SUCCESS, atomically on local disks (temp folder, rename;
    an object store has no folder to rename: its files are moved one by one, _SUCCESS last)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import fs

    filesystem, inner = arrow_filesystem(path)
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
    if isinstance(filesystem, fs.LocalFileSystem):
        filesystem.move(temporary, inner)
        return
    files = [info.path for info in filesystem.get_file_info(fs.FileSelector(temporary, recursive=True))
             if info.type == fs.FileType.File]
    for source in sorted(files, key=lambda name: name.endswith("/_SUCCESS")):
        filesystem.move(source, inner + source[len(temporary):])
    filesystem.delete_dir(temporary)


def list_files(path: str, suffix: str = "", endpoint: str | None = None) -> list[str]:
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
    if kind in S3_SCHEMES:
        bucket, prefix = bucket_key(path)
        paginator = s3_client(endpoint).get_paginator("list_objects_v2")
        keys = [obj["Key"] for page in paginator.paginate(Bucket=bucket, Prefix=prefix)
                for obj in page.get("Contents", []) if obj["Key"].endswith(suffix)]
        return sorted(f"{kind}://{bucket}/{key}" for key in keys)
    return [path]


def object_size(path: str, endpoint: str | None = None) -> int:
    """Size in bytes of a local or s3:// file."""
    if is_local(path):
        return os.path.getsize(local_path(path))
    bucket, key = bucket_key(path)
    return int(s3_client(endpoint).head_object(Bucket=bucket, Key=key)["ContentLength"])


def upload_dir(local: str | Path, remote: str, endpoint: str | None = None) -> int:
    """Copy every file under a local folder to an s3:// prefix (keys relative to the folder); files copied."""
    local = Path(local)
    bucket, prefix = bucket_key(remote)
    client = s3_client(endpoint)
    files = [path for path in sorted(local.rglob("*")) if path.is_file()]
    for path in files:
        key = "/".join(p for p in (prefix.rstrip("/"), path.relative_to(local).as_posix()) if p)
        client.upload_file(str(path), bucket, key)
    return len(files)


def download_dir(remote: str, local: str | Path, endpoint: str | None = None) -> int:
    """Copy every object under an s3:// prefix into a local folder (paths relative to the prefix); objects
    copied. A key that would land outside the folder is refused (BadLocation)."""
    local = Path(local)
    bucket, prefix = bucket_key(remote)
    prefix = prefix.rstrip("/") + "/"
    client = s3_client(endpoint)
    found = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            relative = item["Key"][len(prefix):]
            if not relative or relative.endswith("/"):
                continue
            destination = Path(resolve_under(str(local), relative))
            destination.parent.mkdir(parents=True, exist_ok=True)
            client.download_file(bucket, item["Key"], str(destination))
            found += 1
    return found
