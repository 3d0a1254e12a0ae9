"""No module constant decides an outcome: a threshold, share or weight a user may want to change is a field of its
stage's config dataclass (or a job option), where it is documented, settable and recorded in the report.

A numeric module constant is allowed when it is one of the kinds below, each saying why it is no knob. A new
constant fails this test until it is moved into a config or given a kind here."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: bounds on memory, time or size against hostile or huge input: normal pages never reach them, so they change what
#: a run costs, not its results (a page over a bound is counted: text_truncated, line_too_long ...)
BOUNDS = {
    "common/urls.py": {"MAX_URL_CHARS"},
    "common/range_reads.py": {"READ_CHUNK_BYTES", "STREAM_CHUNK_BYTES"},
    "fetch/html_text.py": {"MAX_STRUCTURE_TOKENS", "MAX_TITLE_CHARS", "MAX_IMAGE_NAME_CHARS"},
    "fetch/page_walk.py": {"MAX_CUE_TEXT_CHARS", "MAX_MEMO_KEYS", "MAX_OUTLINKS", "MAX_OUTLINK_CHARS",
                           "MAX_OUTLINKS_TOTAL_CHARS", "MAX_IMAGES"},
    "fetch/tag_rules.py": {"MAX_STATIC_TAG_ID", "MAX_TAG_NAMES"},
    "fetch/meta_tags.py": {"MAX_METADATA_CHARS", "MAX_KEYWORDS"},
    "fetch/warc_fetch.py": {"OUTPUT_BATCH_ROWS"},
    "fetch/warc_record.py": {"MAX_UNCOMPRESSED_BYTES", "RECORD_SECONDS", "STREAM_CHUNK", "INFLATE_CHUNK"},
    "index/cdx.py": {"READ_CHUNK_BYTES", "MAX_RANGE_BYTES", "MAX_LINE_BYTES"},
    "index/cdx_records.py": {"MAX_HELD_HOST_ROWS"},
    "index/warc_index.py": {"HEAD_BYTES", "READ_CHUNK", "WAT_BATCH_ROWS"},
    "index/wat.py": {"OUTPUT_BATCH_ROWS"},
    "rank/blocking/similarity.py": {"EXACT_CHUNK_CELLS", "MINHASH_CHUNK_TOKENS"},
    "rank/ranking.py": {"SCORING_BATCH"},
    "rank/url_models/preprocess.py": {"MAX_SCHEME_CHARS"},
    "rank/url_models/training_data.py": {"COMPACTION_ROWS"},
    "verify/structure.py": {"MAX_ALIGNED_TOKENS"},
    "sample_archive/index.py": {"ROW_GROUP_ROWS"},
    "jobs/verify_pairs.py": {"ARROW_BATCH_ROWS"},
}
#: values a format fixes (file format versions, gzip's window bits, ZipNum's block size, WARC writers' slack, hash
#: salts and bit layouts)
FORMATS = {
    "lexicon/lexicon.py": {"FORMAT_VERSION"},
    "rank/url_models/model_dir.py": {"FORMAT_VERSION"},
    "index/cdx.py": {"ZIPNUM_BLOCK_LINES", "GZIP_WBITS"},
    "index/warc_index.py": {"TRAILER_SLACK"},
    "rank/url_models/charsmap.py": {"_HAS_LEAF", "_OFFSET_SHIFT", "_MAX_OFFSET", "_VALUE_FLAG"},
    "rank/url_models/ngram_features.py": {"_MASK64", "_BASE", "_SALT_NGRAM", "_SALT_TOKEN"},
    "rank/url_models/ngram_pairs.py": {"_SALT_DIFF", "_SALT_SIGNATURE", "_SALT_CROSS", "_PAIR_KEY"},
    "replay/simulator.py": {"MAGNITUDE_BITS", "TOP", "COUNTER_MASK", "SEED_ORDER"},
}
#: how long to wait between retries, progress lines and lock renewals: operations, not results
TIMING = {
    "common/locks.py": {"LOCK_LEASE_SECONDS"},
    "common/progress.py": {"PROGRESS_SECONDS", "QUIET_SECONDS"},
    "common/range_reads.py": {"MAX_RETRY_AFTER_SECONDS", "MAX_BACKOFF_SECONDS"},
}
#: constants of a formula or sentinels outside the data's range (a 95% interval's z, a logit's clip away from 0 and
#: 1, the fewest points a correlation is computed on, the resolution of a yield curve)
MATHEMATICS = {
    "export/audit.py": {"Z_95"},
    "rank/ranking.py": {"SCORE_EPSILON"},
    "rank/blocking/content.py": {"MISSING_PARAGRAPH"},
    "verify/structure.py": {"MIN_CHUNKS_FOR_CORRELATION"},
    "verify/verification.py": {"NO_OWN_TEXT_FLOOR", "NO_PAIR_COVERED"},
    "replay/metrics.py": {"GRID_POINTS"},
}
#: part of a trained pair model's feature definition: scoring must use the values it was trained with
MODEL_DEFINITION = {"rank/url_models/calibration.py": {"MARGIN_CLIP", "CONFIDENT"}}
#: what a report or plot shows (rows, labels, the wording of a gap), not what a table holds
PRESENTATION = {
    "common/demo_report.py": {"MAX_SITES", "GAP", "TRUSTED", "GOOD_F1", "LOW_F1"},
    "replay/plots.py": {"MAX_LABELLED_SITES"},
    "replay/report.py": {"MAX_SITE_ROWS"},
    "jobs/export_bitext.py": {"EXAMPLES_IN_REPORT", "EXAMPLE_MIN_WORDS"},
    "jobs/errors.py": {"MAX_ERROR_CHARS"},  # how much of a failed run's error its report holds
}
#: the sample archive generator's fixed shape (its knobs are make-sample-archive's options and
#: conf/sample_archive.yaml)
GENERATOR = {
    "sample_archive/archive.py": {"CAPTURES_PER_PAGE"},
    "sample_archive/corpus.py": {"MIN_PASSAGE", "IDS_PER_DOCUMENT_WITHOUT_DOTS"},
    "sample_archive/sites.py": {"ARTICLES_PER_LISTING"},
    "sample_archive/vocabulary.py": {"N_CONCEPTS"},
}
#: the default of a job option, named once for the option and the library functions behind it (the option is the
#: knob: documented in docs/jobs, recorded in the report)
OPTION_DEFAULTS = {
    "lexicon/training.py": {"HELD_OUT_FOLDS"},  # train-lexicon --held-out-folds
    "export/bitext/sentences.py": {"MAX_SENTENCES"},  # export-bitext --max-sentences
    "rank/domain_focus.py": {"DEFAULT_MIN_SCORE", "DEFAULT_MIN_TERMS"},  # fetch-docs --min-relevance, --min-domain-terms
    "jobs/rank_pairs.py": {"UNCALIBRATED_MIN_SCORE"},  # rank-pairs --align-min-score for a model without a cut-off
    "jobs/align.py": {"UNCALIBRATED_MIN_SCORE"},  # align --min-score for a model without a cut-off
}
#: names for numbers: units, and the codes of an enumeration or of a parser's node types
NAMES = {
    "common/urls.py": {"WHOLE_BASE", "BASE_ORIGIN", "NO_BASE"},
    "fetch/tag_rules.py": {"TEXT_NODE", "FIRST_ELEMENT_ID"},
    "fetch/warc_fetch.py": {"KIB", "MIB"},
}
KINDS = (BOUNDS, FORMATS, TIMING, MATHEMATICS, MODEL_DEFINITION, PRESENTATION, GENERATOR, OPTION_DEFAULTS, NAMES)


def numeric(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return numeric(node.operand)
    return isinstance(node, ast.BinOp) and numeric(node.left) and numeric(node.right)


def module_constants(source: str) -> set[str]:
    """Upper-case module-level names bound to a number (or arithmetic of numbers), one at a time or unpacked from a
    tuple of them (`SHORT, GOOD = 25, 70`)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and numeric(node.value):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            for target in node.targets:
                if isinstance(target, ast.Tuple) and len(target.elts) == len(node.value.elts):
                    names |= {name.id for name, value in zip(target.elts, node.value.elts)
                              if isinstance(name, ast.Name) and numeric(value)}
        elif isinstance(node, ast.AnnAssign) and node.value is not None and numeric(node.value) \
                and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if name.isupper()}


def test_the_scan_finds_numbers_and_their_arithmetic_only():
    source = ("A = 1\nB: float = 0.5\nC = 8 << 20\nD = -1.0\nE = True\nF = 'x'\nlower = 3\ndef f():\n    G = 2\n"
              "H, I = 25, 'x'\n")
    assert module_constants(source) == {"A", "B", "C", "D", "H"}


def test_every_numeric_module_constant_is_a_kind_that_is_no_knob():
    found = {}
    for path in [*sorted((REPO / "udfs").rglob("*.py")), *sorted((REPO / "jobs").glob("*.py"))]:
        key = str(path.relative_to(REPO / "udfs" if path.is_relative_to(REPO / "udfs") else REPO))
        names = module_constants(path.read_text(encoding="utf-8"))
        if names:
            found[key] = names
    allowed: dict[str, set[str]] = {}
    for kind in KINDS:
        for key, names in kind.items():
            assert not names & allowed.get(key, set()), f"{key}: {names} listed under two kinds"
            allowed.setdefault(key, set()).update(names)
    unlisted = {key: sorted(names - allowed.get(key, set())) for key, names in found.items()
                if names - allowed.get(key, set())}
    assert not unlisted, ("module constants that may decide an outcome: move each into its stage's config "
                          f"(udfs/common/stage_config.knob) or give it a kind here: {unlisted}")
    gone = {key: sorted(names - found.get(key, set())) for key, names in allowed.items()
            if names - found.get(key, set())}
    assert not gone, f"listed here but no longer in the code (drop them): {gone}"
