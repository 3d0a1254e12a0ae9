"""Pure per-record and per-batch functions of parascout, and their pandas_udf wrappers, one folder per stage.

    index/    CDX lines, the columnar index, WAT links, URL-declared languages, own WARCs indexed  (scan-cdx, index-warcs)
    fetch/    WARC records by offset, HTML to main text and paragraphs, per-site near-duplicates   (fetch-docs)
    rank/     STRAND handles, URL blocking, the URL models, 1-1 alignment, domain focus, shortlist  (rank-pairs, ...)
    verify/   content similarity, STRAND's structure filter, the verification decision          (verify-pairs)
    export/   sentence splitting and alignment, bitext filters and formats, crawl plans          (export-bitext, ...)
    replay/   the crawl replay simulator, its policies, metrics and report                        (replay-crawl)
    common/   storage, the table registry, languages, URLs, sites, lexicons, progress, redaction  (every stage)
    sample_archive/  the sample archive generator                                              (make-sample-archive)

Nothing in this package creates a SparkSession: everything is testable with plain pandas.
"""
