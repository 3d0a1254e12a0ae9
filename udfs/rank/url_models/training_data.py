"""Training data of the URL models: url2lang examples from the `urls` table (label = its `lang`: the language
the URL declares where the site uses URL markers, else CLD2's; capped per language by the smallest seeded
hashes, so memory stays bounded while reading), pair examples (positives plus synthetic negatives,
negatives.py), and the train/dev/test split by registered domain (hosts of one site never cross splits)."""
from __future__ import annotations

import logging
import os
from collections import Counter

import numpy as np
import pandas as pd

from parascout.udfs.common import storage
from parascout.udfs.common.urls import registered_domain, url_host
from parascout.udfs.rank.url_models.negatives import DEFAULT_STRATEGIES, generate_negatives

log = logging.getLogger("parascout.url_models")


PAIR_LABELS = ["non-parallel", "parallel"]


COMPACTION_ROWS = 2_000_000


# ---- splits -------------------------------------------------------------------------
def split_by_host(hosts: pd.Series, dev_fraction: float, test_fraction: float, seed: int = 0,
                  rows: pd.Series | None = None) -> pd.Series:
    """'train' / 'dev' / 'test' per row; all hosts of one registered domain land in the same split.

    With too few domains to hold out any and still train (an archive of one or two sites), the rows are split
    by a hash of `rows` (e.g. the URL) instead, within the sites: the model then adapts to the archive's own
    URL conventions, and its dev/test figures say how well it knows these sites, not new ones."""
    domains = hosts.fillna("").map(_split_key)
    names = _split(domains, dev_fraction, test_fraction, seed)
    if (names == "train").any() or rows is None:
        return names
    log.warning("%d site(s): too few to hold whole sites out; splitting their URLs instead (dev/test figures "
                "measure these sites' URLs, not unseen sites)", domains.nunique())
    return _split(rows.fillna("").reset_index(drop=True).set_axis(hosts.index), dev_fraction, test_fraction, seed)


def _split(keys: pd.Series, dev_fraction: float, test_fraction: float, seed: int) -> pd.Series:
    """'train' / 'dev' / 'test' per row by seeded hash order of its key; rows of one key share a split."""
    sizes = keys.value_counts()
    key = f"{seed % 10**16:016d}"
    order = np.argsort(pd.util.hash_pandas_object(pd.Series(sizes.index), index=False, hash_key=key).to_numpy(),
                       kind="stable")
    ordered = sizes.iloc[order]
    before = np.cumsum(ordered.to_numpy()) - ordered.to_numpy()      # rows in keys earlier in hash order
    test_target, dev_target = test_fraction * len(keys), dev_fraction * len(keys)
    is_test = before < test_target
    test_rows = ordered.to_numpy()[is_test].sum()
    is_dev = ~is_test & (before - test_rows < dev_target)
    names = np.where(is_test, "test", np.where(is_dev, "dev", "train"))
    return keys.map(dict(zip(ordered.index, names)))


def _split_key(host: str) -> str:
    return registered_domain(host) or host


# ---- url2lang data ------------------------------------------------------------------
def _urls_source(path: str) -> str:
    """A Parquet file/folder, or a dataset root holding urls/."""
    candidate = storage.join(path, "urls")
    if storage.exists(storage.join(candidate, "_SUCCESS")) or (storage.is_local(path) and os.path.isdir(candidate)):
        return candidate
    return path


def load_url2lang_examples(path: str, cap_per_language: int = 600_000, unknown_from_null: bool = False,
                           seed: int = 0) -> tuple[pd.DataFrame, Counter]:
    """(url, host, lang) rows from the urls table, at most `cap_per_language` per label, and counts by reason.

    Counts: input, kept, bad:no_url, bad:no_host, filtered:no_language, filtered:duplicate_url,
    filtered:over_language_cap. Null languages become 'unk' when unknown_from_null.
    """
    import pyarrow.dataset as ds

    source = _urls_source(path)
    filesystem, inner = storage.arrow_filesystem(source)
    dataset = ds.dataset(inner, format="parquet", filesystem=filesystem, exclude_invalid_files=True)
    columns = [c for c in ("url", "host", "lang") if c in dataset.schema.names]
    if "url" not in columns or "lang" not in columns:
        raise ValueError(f"{source}: expected a urls table with columns url and lang, found {dataset.schema.names}")
    counts: Counter = Counter()
    buffered: list[pd.DataFrame] = []
    buffered_rows = 0
    for record_batch in ds.Scanner.from_dataset(dataset, columns=columns, batch_size=262_144).to_batches():
        frame = record_batch.to_pandas()
        counts["input"] += len(frame)
        frame = _clean_url_rows(frame, unknown_from_null, counts)
        frame["rank"] = pd.util.hash_pandas_object(frame["url"], index=False, hash_key=f"{seed % 10**16:016d}").to_numpy()
        buffered.append(frame)
        buffered_rows += len(frame)
        if buffered_rows > COMPACTION_ROWS + cap_per_language:
            buffered = [_compact(pd.concat(buffered, ignore_index=True), cap_per_language, counts)]
            buffered_rows = len(buffered[0])
        log.info("url2lang data: read %d rows, %d buffered", counts["input"], buffered_rows)
    empty = pd.DataFrame({"url": pd.Series(dtype=str), "host": pd.Series(dtype=str), "lang": pd.Series(dtype=str),
                          "rank": pd.Series(dtype=np.uint64)})
    frame = _compact(pd.concat(buffered, ignore_index=True) if buffered else empty, cap_per_language, counts)
    counts["kept"] = len(frame)
    return frame.drop(columns=["rank"]).sort_values("url", ignore_index=True), counts


def _clean_url_rows(frame: pd.DataFrame, unknown_from_null: bool, counts: Counter) -> pd.DataFrame:
    no_url = frame["url"].isna() | (frame["url"].astype(str).str.strip() == "")
    counts["bad:no_url"] += int(no_url.sum())
    frame = frame[~no_url].copy()
    if "host" not in frame:
        frame["host"] = None
    missing_host = frame["host"].isna()
    frame.loc[missing_host, "host"] = frame.loc[missing_host, "url"].map(url_host)
    no_host = frame["host"].isna()
    counts["bad:no_host"] += int(no_host.sum())
    frame = frame[~no_host]
    language = frame["lang"].astype("string").str.strip().str.lower()
    language = language.mask(language == "", pd.NA)
    if unknown_from_null:
        language = language.fillna("unk")
    counts["filtered:no_language"] += int(language.isna().sum())
    frame = frame.assign(lang=language)[language.notna()]
    return frame[["url", "host", "lang"]].astype({"lang": str})


def _compact(frame: pd.DataFrame, cap: int, counts: Counter) -> pd.DataFrame:
    before = len(frame)
    frame = frame.drop_duplicates("url")
    counts["filtered:duplicate_url"] += before - len(frame)
    before = len(frame)
    frame = frame.sort_values("rank").groupby("lang", sort=False).head(cap)
    counts["filtered:over_language_cap"] += before - len(frame)
    return frame.reset_index(drop=True)


# ---- pair data ----------------------------------------------------------------------
def load_pairs(path: str, src_lang: str | None = None, trg_lang: str | None = None) -> tuple[pd.DataFrame, Counter]:
    """Labelled URL pairs from a pair file (`src trg` per line, WMT16 style), the sample archive's
    truth/pairs.parquet, or a verified_pairs table (parallel=False rows become real negatives).

    Returns host, src_url, trg_url, src_lang, trg_lang, label and counts by reason
    (input, kept, bad:malformed_line, bad:missing_url, filtered:blank_line, filtered:unverified,
    filtered:same_url, filtered:duplicate_pair).
    """
    source = _pairs_source(path)
    counts: Counter = Counter()
    if _is_parquet(source):
        frame = _read_parquet(source)
        counts["input"] += len(frame)
        if "src_url" not in frame or "trg_url" not in frame:
            raise ValueError(f"{source}: expected columns src_url and trg_url, found {list(frame.columns)}")
        missing = frame["src_url"].isna() | frame["trg_url"].isna()
        counts["bad:missing_url"] += int(missing.sum())
        frame = frame[~missing].copy()
        if "parallel" in frame:
            unverified = frame["parallel"].isna()
            counts["filtered:unverified"] += int(unverified.sum())
            frame = frame[~unverified].copy()
            frame["label"] = frame["parallel"].astype(bool).astype(int)
        else:
            frame["label"] = 1
    else:
        frame = _read_pair_file(source, counts)
    for column, given in (("src_lang", src_lang), ("trg_lang", trg_lang)):
        if column not in frame or given:
            frame[column] = given
    if "host" not in frame:
        frame["host"] = None
    frame["host"] = frame["host"].where(frame["host"].notna(), frame["src_url"].map(url_host))
    same = frame["src_url"] == frame["trg_url"]
    counts["filtered:same_url"] += int(same.sum())
    frame = frame[~same]
    before = len(frame)
    frame = frame.drop_duplicates(["src_url", "trg_url"])
    counts["filtered:duplicate_pair"] += before - len(frame)
    counts["kept"] = len(frame)
    columns = ["host", "src_url", "trg_url", "src_lang", "trg_lang", "label"]
    return frame[columns].reset_index(drop=True), counts


def _pairs_source(path: str) -> str:
    for inner in ("truth/pairs.parquet", "verified_pairs"):
        candidate = storage.join(path, inner)
        if storage.is_local(path) and os.path.isdir(path) and os.path.exists(candidate):
            return candidate
    return path


def _is_parquet(path: str) -> bool:
    """A Parquet file or folder (anything else is read as a `src trg` pair file)."""
    if path.endswith(".parquet"):
        return True
    if storage.is_local(path):
        return os.path.isdir(storage.local_path(path))
    return "." not in path.rstrip("/").rsplit("/", 1)[-1]


def _read_parquet(path: str) -> pd.DataFrame:
    import pyarrow.dataset as ds

    filesystem, inner = storage.arrow_filesystem(path)
    return ds.dataset(inner, format="parquet", filesystem=filesystem, exclude_invalid_files=True).to_table().to_pandas()


def _read_pair_file(path: str, counts: Counter) -> pd.DataFrame:
    rows = []
    for line in storage.read_text(path).splitlines():
        counts["input"] += 1
        fields = line.split()
        if not fields:
            counts["filtered:blank_line"] += 1
        elif len(fields) != 2 or not all(url_host(f) for f in fields):
            counts["bad:malformed_line"] += 1
        else:
            rows.append(fields)
    frame = pd.DataFrame(rows, columns=["src_url", "trg_url"])
    frame["label"] = 1
    return frame


def pair_examples(pairs: pd.DataFrame, strategies: tuple[str, ...] = DEFAULT_STRATEGIES, per_positive: int = 1,
                  dev_fraction: float = 0.1, test_fraction: float = 0.1, seed: int = 0) -> pd.DataFrame:
    """Positives, real negatives and same-host synthetic negatives, split by host (columns + split, source)."""
    pairs = pairs.copy()
    pairs["split"] = split_by_host(pairs["host"], dev_fraction, test_fraction, seed).to_numpy()
    pairs["source"] = np.where(pairs["label"] == 1, "positive", "verified_negative")
    positives = pairs[pairs["label"] == 1]
    known = set(zip(positives["src_url"], positives["trg_url"])) | set(zip(positives["trg_url"], positives["src_url"]))
    parts = [pairs]
    for split_name, group in positives.groupby("split"):
        negatives = generate_negatives(group, strategies, per_positive=per_positive, seed=seed)
        negatives = negatives[[(s, t) not in known for s, t in zip(negatives["src_url"], negatives["trg_url"])]]
        parts.append(negatives.rename(columns={"strategy": "source"}).assign(label=0, split=split_name))
    columns = ["host", "src_url", "trg_url", "src_lang", "trg_lang", "label", "split", "source"]
    return pd.concat([p[columns] for p in parts], ignore_index=True)


# ---- the training loop --------------------------------------------------------------
def labelled_examples(frame: pd.DataFrame, task: str, label_index: dict) -> dict:
    if task == "pairs":
        data = {"src_url": frame["src_url"].tolist(), "trg_url": frame["trg_url"].tolist()}
        data["label"] = frame["label"].to_numpy(dtype=np.int64)
    else:
        data = {"url": frame["url"].tolist()}
        data["label"] = np.array([label_index[v] for v in frame["lang"]], dtype=np.int64)
    return data

