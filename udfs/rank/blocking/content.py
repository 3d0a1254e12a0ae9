"""Content blocking from fetched pages (ILSP-FC): pages of the two languages that show the same rare image
file name, and each page's nearest pages of the other language by paragraph-length profile (STRAND's length
correlation as a blocker). Names on many of a site's pages are ignored and over-shared names are counted, so no
site can blow up. The rare-image and profile knobs are BlockingConfig's (udfs.rank.blocking.config), passed down as
`config`; the share and page caps are rank-pairs' --image-max-share / --image-max-pages."""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from parascout.udfs.common.spark_functions import bind
from parascout.udfs.rank.blocking.config import DEFAULT, BlockingConfig
from parascout.udfs.rank.blocking.plans import cap_group
from parascout.udfs.rank.blocking.similarity import EXACT_CHUNK_CELLS

IMAGE_STATUSES = ("ok", "common", "one_language", "capped")


#: profile value of a paragraph a page does not have (centred log lengths lie within about +-3)
MISSING_PARAGRAPH = -9.0


# ---- shared image names (ILSP-FC content blocking) -----------------------------------------
def image_status(n_pages, n_src, n_trg, site_pages, config: BlockingConfig = DEFAULT):
    """Why an image name of a site does or does not pair pages (numpy arrays in, array of statuses out):
    common (on > max(image_rare_pages, image_max_share x site pages) pages), one_language, capped (> image_max_pages
    pages: its n_src x n_trg pairs are skipped) or ok."""
    n_pages, n_src, n_trg = np.asarray(n_pages), np.asarray(n_src), np.asarray(n_trg)
    common = n_pages > np.maximum(config.image_rare_pages,
                                  config.image_max_share * np.asarray(site_pages, dtype=np.float64))
    conditions = [common, (n_src == 0) | (n_trg == 0), n_pages > config.image_max_pages]
    return np.select(conditions, list(IMAGE_STATUSES[1:]), IMAGE_STATUSES[0])


def shared_image_pairs(pages: pd.DataFrame, languages: tuple[str, str], config: BlockingConfig = DEFAULT
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs of fetched pages (site, url, lang, images) in the two languages sharing a usable image name,
    as (host, src_url, trg_url), and every (site, image) name with n_pages, n_src, n_trg, site_pages, status.

    The pandas twin of `image_pairs` (the Spark plan rank-pairs runs), for benchmarks and tests.
    """
    pages = pages[pages["lang"].isin(languages)]
    site_pages = pages.groupby("site")["url"].nunique().rename("site_pages")
    incidences = (pages[["site", "url", "lang", "images"]].explode("images").rename(columns={"images": "image"})
                  .dropna(subset=["image"]))
    incidences = incidences[incidences["image"] != ""].drop_duplicates()
    names = incidences.assign(is_src=incidences["lang"] == languages[0], is_trg=incidences["lang"] == languages[1]
                              ).groupby(["site", "image"]).agg(n_pages=("url", "size"), n_src=("is_src", "sum"),
                                                               n_trg=("is_trg", "sum")).reset_index()
    names = names.join(site_pages, on="site")
    names["image_status"] = image_status(names["n_pages"], names["n_src"], names["n_trg"], names["site_pages"],
                                         config)
    usable = incidences.merge(names.loc[names["image_status"] == "ok", ["site", "image"]], on=["site", "image"])
    src = usable[usable["lang"] == languages[0]].rename(columns={"url": "src_url"})[["site", "image", "src_url"]]
    trg = usable[usable["lang"] == languages[1]].rename(columns={"url": "trg_url"})[["site", "image", "trg_url"]]
    pairs = src.merge(trg, on=["site", "image"])[["site", "src_url", "trg_url"]].drop_duplicates()
    return pairs.rename(columns={"site": "host"}).reset_index(drop=True), names


def image_pairs(docs, kept, config: BlockingConfig = DEFAULT):
    """Spark plan of `shared_image_pairs` over `docs` (url, images[, status]) and kept URLs (lang_pair, src_lang,
    trg_lang, url, site, lang; plans.with_pair), each language pair apart: (pairs: lang_pair, host, src_url,
    trg_url; names: lang_pair, site, image, n_pages, n_src, n_trg, site_pages, image_status).

    Joins and group-bys only; a (site, image) group is joined with itself only when it holds at most
    `config.image_max_pages` pages, so one name gives at most (image_max_pages / 2)^2 pairs.
    """
    from pyspark.sql import functions as F

    fetched = docs.filter(F.col("status") == "ok") if "status" in docs.columns else docs
    pages = fetched.select("url", "images").join(
        kept.select("lang_pair", "src_lang", "trg_lang", "url", "site", "lang"), "url")
    site = ["lang_pair", "site"]
    site_pages = pages.groupBy(*site).agg(F.countDistinct("url").alias("site_pages"))
    incidences = (pages.select(*site, "src_lang", "trg_lang", "url", "lang", F.explode("images").alias("image"))
                  .filter(F.col("image").isNotNull() & (F.col("image") != "")).distinct())
    n_pages, n_src, n_trg = F.col("n_pages"), F.col("n_src"), F.col("n_trg")
    common = n_pages > F.greatest(F.lit(float(config.image_rare_pages)),
                                  F.lit(float(config.image_max_share)) * F.col("site_pages"))
    status = (F.when(common, IMAGE_STATUSES[1]).when((n_src == 0) | (n_trg == 0), IMAGE_STATUSES[2])
              .when(n_pages > config.image_max_pages, IMAGE_STATUSES[3]).otherwise(IMAGE_STATUSES[0]))
    names = (incidences.groupBy(*site, "image")
             .agg(F.count("*").alias("n_pages"),
                  F.sum((F.col("lang") == F.col("src_lang")).cast("long")).alias("n_src"),
                  F.sum((F.col("lang") == F.col("trg_lang")).cast("long")).alias("n_trg"))
             .join(site_pages, site).withColumn("image_status", status))
    usable = incidences.join(names.filter(F.col("image_status") == IMAGE_STATUSES[0]).select(*site, "image"),
                             [*site, "image"])
    src = usable.filter(F.col("lang") == F.col("src_lang")).select(*site, "image", F.col("url").alias("src_url"))
    trg = usable.filter(F.col("lang") == F.col("trg_lang")).select(*site, "image", F.col("url").alias("trg_url"))
    pairs = (src.join(trg, [*site, "image"]).select("lang_pair", F.col("site").alias("host"), "src_url", "trg_url")
             .distinct())
    return pairs, names


# ---- paragraph-length profiles (structure blocking) ------------------------------------------
def paragraph_profile(structure, paragraphs: int = DEFAULT.profile_paragraphs) -> list[float]:
    """log(1 + text length) of the first `paragraphs` <p> elements of a STRAND linearisation (docs.structure)."""
    lengths: list[float] = []
    inside = False
    for token in structure if structure is not None else ():
        if token == "[START:p]":
            inside = True
            lengths.append(0.0)
        elif token == "[END:p]":
            inside = False
            if len(lengths) >= paragraphs:
                break
        elif inside and token.startswith("[Chunk:"):
            lengths[-1] += float(token[7:-1])
    return [float(np.log1p(length)) for length in lengths[:paragraphs]]


def paragraph_profiles(batches: Iterator[pd.Series], paragraphs: int = DEFAULT.profile_paragraphs
                       ) -> Iterator[pd.Series]:
    """pandas_udf body: docs.structure -> paragraph_profile (array<double>)."""
    for structures in batches:
        yield pd.Series([paragraph_profile(structure, paragraphs) for structure in structures], dtype=object)


def profile_matrix(profiles: list, paragraphs: int = DEFAULT.profile_paragraphs) -> np.ndarray:
    """Profiles of one language as rows, centred on the mean log length of that language's paragraphs (a
    language's texts are uniformly longer or shorter), padded with MISSING_PARAGRAPH."""
    matrix = np.full((len(profiles), paragraphs), np.nan)
    for row, profile in enumerate(profiles):
        values = np.asarray(profile if profile is not None else (), dtype=np.float64)[:paragraphs]
        matrix[row, :len(values)] = values
    present = ~np.isnan(matrix)
    if present.any():
        matrix[present] -= matrix[present].mean()
    return np.where(present, matrix, MISSING_PARAGRAPH)


def nearest_profiles(queries: np.ndarray, others: np.ndarray, k: int) -> pd.DataFrame:
    """For each query row, its k nearest rows of `others` by L1 distance (in bounded chunks of rows)."""
    if len(queries) == 0 or len(others) == 0:
        return pd.DataFrame({"query": [], "other": [], "distance": []})
    chunk = max(1, EXACT_CHUNK_CELLS // max(1, len(others) * queries.shape[1]))
    found = []
    for start in range(0, len(queries), chunk):
        distance = np.abs(queries[start:start + chunk, None, :] - others[None, :, :]).sum(axis=2)
        nearest = np.argsort(distance, axis=1, kind="stable")[:, :k]
        rows = np.repeat(np.arange(len(distance)), nearest.shape[1])
        found.append(pd.DataFrame({"query": rows + start, "other": nearest.ravel(),
                                   "distance": distance[rows, nearest.ravel()]}))
    return pd.concat(found, ignore_index=True)


def structure_pairs_for_group(group: pd.DataFrame, src_lang: str, trg_lang: str, k: int, max_urls: int,
                              config: BlockingConfig = DEFAULT) -> pd.DataFrame:
    """Each fetched page's k nearest pages of the other language by paragraph-length profile, both ways,
    for one group (host, url, lang, profile); pages without a paragraph take no part."""
    group = cap_group(group, max_urls)
    group = group[[profile is not None and len(profile) > 0 for profile in group["profile"]]]
    src = group[group["lang"] == src_lang].reset_index(drop=True)
    trg = group[group["lang"] == trg_lang].reset_index(drop=True)
    columns = {"lang_pair": object, "host": object, "src_url": object, "trg_url": object, "distance": np.float64}
    if src.empty or trg.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in columns.items()})
    src_matrix = profile_matrix(list(src["profile"]), config.profile_paragraphs)
    trg_matrix = profile_matrix(list(trg["profile"]), config.profile_paragraphs)
    forward = nearest_profiles(src_matrix, trg_matrix, k).rename(columns={"query": "src", "other": "trg"})
    backward = nearest_profiles(trg_matrix, src_matrix, k).rename(columns={"query": "trg", "other": "src"})
    pairs = pd.concat([forward, backward], ignore_index=True).drop_duplicates(["src", "trg"])
    return pd.DataFrame({"lang_pair": group["lang_pair"].iloc[0] if "lang_pair" in group else f"{src_lang}-{trg_lang}",
                         "host": group["host"].iloc[0],
                         "src_url": src["url"].to_numpy()[pairs["src"].to_numpy(dtype=np.int64)],
                         "trg_url": trg["url"].to_numpy()[pairs["trg"].to_numpy(dtype=np.int64)],
                         "distance": pairs["distance"].to_numpy(dtype=np.float64)})


STRUCTURE_SCHEMA = "lang_pair string, host string, src_url string, trg_url string, distance double"


def structure_pairs_for_group_frame(group: pd.DataFrame, k: int, max_urls: int, config: BlockingConfig = DEFAULT
                                    ) -> pd.DataFrame:
    """applyInPandas: `structure_pairs_for_group` for a (lang_pair, host, group_key) group of fetched kept URLs."""
    return structure_pairs_for_group(group, group["src_lang"].iloc[0], group["trg_lang"].iloc[0], k, max_urls, config)


def structure_pairs(docs, kept, k: int, max_urls: int, config: BlockingConfig = DEFAULT):
    """Spark plan: (lang_pair, host, src_url, trg_url, distance) nearest by paragraph profile within the kept URL
    groups of each language pair (kept: plans.with_pair's columns, group_key).

    Profiles (a few doubles) are computed before the shuffle, never the structure arrays themselves.
    """
    from pyspark.sql import functions as F

    fetched = docs.filter(F.col("status") == "ok") if "status" in docs.columns else docs
    paragraphs = config.profile_paragraphs

    def profiles_of(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        return paragraph_profiles(batches, paragraphs)

    profiles = (fetched.select("url", F.pandas_udf(profiles_of, "array<double>")(F.col("structure"))
                               .alias("profile")).dropDuplicates(["url"]))
    return (kept.select("lang_pair", "src_lang", "trg_lang", F.col("site").alias("host"), "group_key", "url", "lang")
            .join(profiles, "url")
            .groupBy("lang_pair", "host", "group_key").applyInPandas(
                bind(structure_pairs_for_group_frame, k=k, max_urls=max_urls, config=config), STRUCTURE_SCHEMA))

