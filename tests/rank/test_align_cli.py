"""`parascout align` end to end on small TSVs: methods, 1-1 per host, bad lines counted, report placement."""
import json
import subprocess
import sys

import pytest

from parascout.jobs.align import AlignJob
from parascout.jobs.errors import ConfigError
from tests.conftest import REPO

LINES = [
    "en\thttp://a.com/en/about.html", "fr\thttp://a.com/fr/about.html",
    "eng\thttp://a.com/page.php?lang=en&id=1", "fra\thttp://a.com/page.php?id=1&lang=fr",
    "en\thttp://en.b.org/news", "fr\thttp://fr.b.org/news",
    "en\thttp://c.net/report_e.htm", "fr\thttp://c.net/report_f.htm",
    "en\thttp://c.net/en/lonely", "de\thttp://a.com/de/about.html", "xx\thttp://a.com/xx/about.html",
    "en\thttp://a.com/en/about.html",                       # duplicate
    "", "only-one-field", "en\thttp://x\tthird", "en\tnot a url", "fr\t", "en\thttp://a.com/" + "x" * 9000,
    "en\thttp://bücher.de/en/start", "fr\thttp://bücher.de/fr/start", "fr\thttp://a.com/fran%C3%A7ais/x",
]


def _write_input(path, lines=LINES, extra: bytes = b""):
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8") + extra)
    return path


def _read_output(path):
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return [(float(score), src, trg) for score, src, trg in rows]


def test_strand_align_end_to_end(tmp_path):
    source = _write_input(tmp_path / "in.tsv", extra=b"en\thttp://a.com/\xff\xfe\n")
    output = tmp_path / "out.tsv"
    report = AlignJob().run(["--src-lang", "en", "--trg-lang", "fr", "--method", "strand", str(source), str(output)])
    rows = _read_output(output)
    assert {(s, t) for _, s, t in rows} == {
        ("http://a.com/en/about.html", "http://a.com/fr/about.html"),
        ("http://a.com/page.php?lang=en&id=1", "http://a.com/page.php?id=1&lang=fr"),
        ("http://en.b.org/news", "http://fr.b.org/news"),
        ("http://c.net/report_e.htm", "http://c.net/report_f.htm"),
        ("http://bücher.de/en/start", "http://bücher.de/fr/start")}
    assert all(0 < score <= 1 for score, _, _ in rows)
    assert report == json.loads((tmp_path / "out.tsv.report.json").read_text())
    assert report["balanced"] and report["inputs"] == {"lines": len(LINES) + 1}
    assert report["kept"] == 10
    assert report["filtered"] == {"other_language": 2, "duplicate_url": 1, "blank_line": 1, "no_candidate": 2}
    assert report["bad"] == {"malformed_line": 2, "unparsable_url": 1, "empty_url": 1, "url_too_long": 1,
                             "undecodable_line": 1}
    assert report["metrics"]["url_flags"] == {"idn_host": 2, "percent_encoded": 1}
    assert report["metrics"]["pairs_aligned"] == 5 and report["outputs"] == {str(output): 5}


def test_alignment_is_one_to_one_per_host_and_wmt16_method(tmp_path):
    lines = ["en\thttp://h.com/en/p", "en\thttp://h.com/english/p", "fr\thttp://h.com/fr/p",
             "fr\thttp://h.com/francais/p", "en\thttp://h.com/p-en", "fr\thttp://g.com/fr/q", "en\thttp://g.com/q"]
    source = _write_input(tmp_path / "in.tsv", lines)
    for method in ("strand", "wmt16"):
        output = tmp_path / f"{method}.tsv"
        report = AlignJob().run(["--src-lang", "eng", "--trg-lang", "fra", "--method", method, "--root",
                                 str(tmp_path / method), str(source), str(output)])
        rows = _read_output(output)
        sources, targets = [s for _, s, _ in rows], [t for _, _, t in rows]
        assert len(set(sources)) == len(sources) and len(set(targets)) == len(targets)
        assert ("http://g.com/q", "http://g.com/fr/q") in {(s, t) for _, s, t in rows}
        assert len(rows) == 3 and report["balanced"]
        assert report["filtered"] == {"lost_in_one_to_one": 1}
        assert (tmp_path / method / "_reports" / "align.json").exists()


def test_module_entry_point_runs(tmp_path):
    source = _write_input(tmp_path / "in.tsv", LINES[:4])
    output = tmp_path / "out.tsv"
    done = subprocess.run([sys.executable, "-m", "parascout.jobs.align", "--src-lang", "en", "--trg-lang", "fr", str(source),
                           str(output)], check=False, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(_read_output(output)) == 2


def test_bad_arguments_fail_early(tmp_path):
    source = _write_input(tmp_path / "in.tsv", LINES[:2])
    with pytest.raises(ConfigError, match="--pair-model"):
        AlignJob().run(["--src-lang", "en", "--trg-lang", "fr", "--method", "model", str(source), str(tmp_path / "o")])
    with pytest.raises(ConfigError, match="must differ"):
        AlignJob().run(["--src-lang", "en", "--trg-lang", "eng", str(source), str(tmp_path / "o")])
    with pytest.raises(ConfigError, match="not found"):
        AlignJob().run(["--src-lang", "en", "--trg-lang", "fr", str(tmp_path / "missing.tsv"), str(tmp_path / "o")])


def test_model_method_end_to_end(tmp_path):
    url_models = pytest.importorskip("parascout.udfs.rank.url_models", reason="udfs.rank.url_models is not importable yet")
    if not hasattr(url_models, "load_model"):
        pytest.skip("udfs.rank.url_models.load_model does not exist yet (the URL-model helper adds it)")
    try:
        from parascout.udfs.rank.url_models.ngram import NgramUrlModel
        from parascout.udfs.rank.url_models.ngram_features import NgramSpec

        NgramUrlModel.create("pairs", ["0", "1"], NgramSpec()).save(tmp_path / "pairs")
        (tmp_path / "pairs" / url_models.METADATA_FILE).write_text(json.dumps({"backend": "ngram", "task": "pairs"}))
        url_models.load_model(str(tmp_path / "pairs"))
    except Exception as error:  # noqa: BLE001 - the model API is being integrated; skip, don't fail
        pytest.skip(f"could not build a small pair model with udfs.rank.url_models ({type(error).__name__}: {error})")
    source = _write_input(tmp_path / "in.tsv", LINES[:8])
    output = tmp_path / "out.tsv"
    report = AlignJob().run(["--src-lang", "en", "--trg-lang", "fr", "--method", "model", "--pair-model",
                             str(tmp_path / "pairs"), "--max-pairs-per-host", "2", "--block-top-k", "1",
                             "--min-score", "0", str(source), str(output)])
    rows = _read_output(output)
    assert report["balanced"] and len(rows) == report["metrics"]["pairs_aligned"] >= 3
    assert report["metrics"]["model_candidates"]["hosts_blocked"] == 1  # a.com: 2×2 pairs > 2
    assert all(0 <= score <= 1 for score, _, _ in rows)


@pytest.fixture(scope="module")
def id_pair_model(tmp_path_factory):
    """A small calibrated pair model trained on sites with language directories and numeric ids."""
    import random

    import pandas as pd

    from parascout.udfs.rank.url_models.model_dir import write_model_dir
    from parascout.udfs.rank.url_models.training import TrainingConfig, train_model
    from parascout.udfs.rank.url_models.training_data import pair_examples

    rng = random.Random(0)
    rows = []
    for h in range(24):
        host, section = f"ids{h}.org", rng.choice(["item", "node", "page", "article"])
        for i in rng.sample(range(100, 400), 16):
            rows.append((host, f"http://{host}/en/{section}/{i}", f"http://{host}/fr/{section}/{i}", "eng", "fra", 1))
    positives = pd.DataFrame(rows, columns=["host", "src_url", "trg_url", "src_lang", "trg_lang", "label"])
    config = TrainingConfig(backend="ngram", buckets=1 << 14, dim=16, max_epochs=4, batch_size=64, threads=1)
    result = train_model("pairs", pair_examples(positives, dev_fraction=0.3, test_fraction=0.0, seed=1), config,
                         {"source": "synthetic"})
    return write_model_dir(result, str(tmp_path_factory.mktemp("models") / "pairs"))


def test_model_leaves_orphans_unaligned_below_the_calibrated_cut_off(id_pair_model, tmp_path):
    pages = [f"http://shop.com/{lang}/item/{i}" for i in (120, 245, 301, 377) for lang in ("en", "fr")]
    lines = [f"{url.split('/')[3]}\t{url}" for url in pages]
    lines += ["en\thttp://shop.com/en/item/999",                               # its French page is missing
              "en\thttp://other.com/en/item/5", "fr\thttp://other.com/fr/item/777"]  # two orphans, one host
    source = _write_input(tmp_path / "in.tsv", lines)
    report = AlignJob().run(["--src-lang", "en", "--trg-lang", "fr", "--method", "model", "--pair-model",
                             id_pair_model, str(source), str(tmp_path / "out.tsv")])
    rows = _read_output(tmp_path / "out.tsv")
    assert {(src, trg) for _, src, trg in rows} == {(f"http://shop.com/en/item/{i}", f"http://shop.com/fr/item/{i}")
                                                   for i in (120, 245, 301, 377)}
    metrics, filtered = report["metrics"], report["filtered"]
    assert metrics["min_score"]["source"].startswith("pair model decision") and 0 < metrics["min_score"]["value"] < 1
    assert metrics["urls_left_unaligned"] == 3 and report["balanced"] and report["kept"] == 8
    assert filtered.get("below_min_score", 0) + filtered.get("lost_in_one_to_one", 0) == 3
    assert filtered["below_min_score"] >= 2                                 # other.com's two orphans
    forced = AlignJob().run(["--src-lang", "en", "--trg-lang", "fr", "--method", "model", "--pair-model",
                             id_pair_model, "--min-score", "0", str(source), str(tmp_path / "forced.tsv")])
    assert forced["metrics"]["min_score"] == {"value": 0.0, "source": "--min-score"}
    assert forced["metrics"]["pairs_aligned"] == 5 and forced["metrics"]["urls_left_unaligned"] == 1
