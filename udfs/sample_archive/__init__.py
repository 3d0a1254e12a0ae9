"""A deterministic sample web archive in CommonCrawl's formats, with ground truth.

`generate(out_dir, hosts=..., seed=..., langs=..., cdx_only=...)` writes WARC, WAT,
ZipNum CDX and columnar-index files of synthetic multilingual hosts, and
`truth/pairs.parquet` + `truth/hosts.parquet` with the translations they contain. With
`text_corpus=DIR` (aligned `<iso639-3>.tsv.gz` files) pages hold real translations, boilerplate
and hard negatives, and `truth/sentences.parquet` aligns their sentences.
"""
from parascout.udfs.sample_archive.archive import format_summary, generate, resolve_languages
from parascout.udfs.sample_archive.conventions import code_strip_recoverable, strip_language_codes

__all__ = ["code_strip_recoverable", "format_summary", "generate", "resolve_languages", "strip_language_codes"]
