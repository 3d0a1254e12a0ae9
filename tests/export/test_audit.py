"""audit (jobs/audit.py, udfs/export/audit.py): the seeded draw per site, the page (hostile text escaped, its script
parsed and driven by node), the Wilson interval, judgements read back, and the job end to end on a tiny bitext root."""
from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import shutil
import subprocess
from html.parser import HTMLParser
from typing import ClassVar

import pandas as pd
import pytest

from parascout.jobs.audit import AuditJob
from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.udfs.export.audit import (
    ALL_SITES,
    JUDGEMENT_COLUMNS,
    items_tsv,
    page_text,
    precision_table,
    read_items,
    read_judgements,
    render_page,
    sample_per_site,
    url_link,
    wilson_interval,
    with_item_ids,
)
from tests.conftest import run_job

HOSTILE = '<script>alert("owned")</script> & \'single\' "double" <img src=x onerror=alert(1)>\x00\x07\x1b\ud800 end'


# ---- the draw ------------------------------------------------------------------------------------------------
def exported_sentences(counts: dict[str, int]) -> pd.DataFrame:
    rows = [{"lang_pair": "eng-fra", "site": site, "src_url": f"http://{site}/en/{n // 3}",
             "trg_url": f"http://{site}/fr/{n // 3}", "bead": n % 3} for site, count in counts.items()
            for n in range(count)]
    return with_item_ids(pd.DataFrame(rows), "sentence")


def test_the_draw_is_per_site_reproducible_and_independent_of_batches():
    frame = exported_sentences({"a.example": 20, "b.example": 3, "c.example": 1})
    drawn = sample_per_site(frame, per_site=2, seed=7)
    assert drawn.groupby("site").size().to_dict() == {"a.example": 2, "b.example": 2, "c.example": 1}
    assert drawn["item_id"].tolist() == sample_per_site(frame.sample(frac=1, random_state=1), 2, 7)["item_id"].tolist()
    # the draw of the batches' draws is the draw of the whole: Spark draws per batch, then per site
    batches = pd.concat([sample_per_site(part, 2, 7) for part in (frame.iloc[:9], frame.iloc[9:17], frame.iloc[17:])])
    assert set(sample_per_site(batches, 2, 7)["item_id"]) == set(drawn["item_id"])
    assert set(sample_per_site(frame, 2, 8)["item_id"]) != set(drawn["item_id"])  # another seed, another draw
    assert frame["item_id"].is_unique and frame["item_id"].str.startswith("s-").all()
    assert exported_sentences({"a.example": 2})["item_id"].tolist() == frame["item_id"].tolist()[:2]  # stable ids


# ---- the page ------------------------------------------------------------------------------------------------
class PageParts(HTMLParser):
    """What a browser would build from the page: script elements, tag attributes, the items' data attributes."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []
        self.attributes: list[tuple[str, dict]] = []
        self.items: list[dict] = []
        self.in_script = False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.attributes.append((tag, attributes))
        if tag == "script":
            self.in_script = True
            self.scripts.append("")
        if tag == "section":
            self.items.append({_camel(name[5:]): value for name, value in attributes.items()
                               if name.startswith("data-")})

    def handle_endtag(self, tag):
        self.in_script = self.in_script and tag != "script"

    def handle_data(self, data):
        if self.in_script:
            self.scripts[-1] += data


def _camel(name: str) -> str:
    head, *rest = name.split("-")
    return head + "".join(part.capitalize() for part in rest)


def page_items(texts: dict[str, str] | None = None) -> pd.DataFrame:
    """Two document pairs and one sentence pair, the first document's texts, site and URLs from `texts`."""
    first = {"site": "a.example", "src_url": "http://a.example/en", "trg_url": "http://a.example/fr",
             "text": "The house.", **(texts or {})}
    rows = [{"kind": "document", "site": first["site"], "lang_pair": "eng-fra", "src_url": first["src_url"],
             "trg_url": first["trg_url"], "src_lang": "eng", "trg_lang": "fra", "src_text": first["text"],
             "trg_text": "La maison.", "sentence_pairs": 1, "bead": None, "score": None},
            {"kind": "document", "site": "b.example", "lang_pair": "eng-fra", "src_url": "https://b.example/en",
             "trg_url": "https://b.example/fr", "src_lang": "eng", "trg_lang": "fra", "src_text": "Long text.\n" * 200,
             "trg_text": "Texte long.\n" * 200, "sentence_pairs": 200, "bead": None, "score": None},
            {"kind": "sentence", "site": "b.example", "lang_pair": "eng-fra", "src_url": "https://b.example/en",
             "trg_url": "https://b.example/fr", "src_lang": "eng", "trg_lang": "fra", "src_text": "Long text.",
             "trg_text": "Texte long.", "sentence_pairs": None, "bead": 0, "score": 0.9}]
    frame = pd.DataFrame(rows)
    return pd.concat([with_item_ids(frame[frame["kind"] == kind], kind) for kind in ("document", "sentence")],
                     ignore_index=True)


def test_the_page_escapes_hostile_text_and_runs_only_its_own_script():
    items = page_items({"text": HOSTILE, "site": '<b onclick="x()">site</b>', "src_url": "javascript:alert(1)",
                        "trg_url": 'http://x.example/"><script>alert(2)</script>'})
    page = render_page(items, "eng-fra", 'facts <script>alert("facts")</script>')
    page.encode("utf-8")  # no lone surrogate left
    parts = PageParts(page)
    assert len(parts.scripts) == 1 and "alert" not in parts.scripts[0]
    assert "<script>alert" not in page and "<img" not in page and "<b onclick" not in page
    assert not any(character in page for character in "\x00\x07\x1b")
    assert html.escape('<script>alert("owned")</script> & \'single\'') in page
    assert html.unescape(page_text(HOSTILE)) == HOSTILE.replace("\x00", "\ufffd").replace("\x07", "\ufffd").replace(
        "\x1b", "\ufffd").replace("\ud800", "\ufffd")
    links = [attributes["href"] for tag, attributes in parts.attributes if tag == "a"]
    assert links and all(link.startswith(("http://", "https://")) for link in links)  # javascript: shown, not linked
    assert 'href="http://x.example/&quot;&gt;&lt;script&gt;' in page
    assert url_link(" javascript:alert(1)").startswith("<span>") and url_link("http://a b").startswith("<span>")
    # the policy lets exactly this script run (its hash), nothing loaded from elsewhere: the page is self-contained
    digest = base64.b64encode(hashlib.sha256(parts.scripts[0].encode("utf-8")).digest()).decode()
    policy = next(a["content"] for tag, a in parts.attributes if a.get("http-equiv") == "Content-Security-Policy")
    assert f"script-src 'sha256-{digest}'" in policy and "default-src 'none'" in policy
    assert not any("src" in attributes for tag, attributes in parts.attributes)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert [item["site"] for item in parts.items] == ['<b onclick="x()">site</b>', "b.example", "b.example"]


def test_the_page_has_keys_progress_storage_and_download():
    page = render_page(page_items(), "eng-fra", "3 pairs")
    script = PageParts(page).scripts[0]
    for code in ('addEventListener("keydown"', 'key === "j"', 'key === "k"', '"1": "right"', '"w": "wrong"',
                 '"p": "partial"', "localStorage.setItem", "localStorage.getItem", "new Blob", "link.download",
                 json.dumps(list(JUDGEMENT_COLUMNS))):
        assert code in script, code
    assert 'id="download"' in page and 'id="progress"' in page and "0 of 3 judged" in page
    assert page.count('class="item document"') == 2 and page.count('class="item sentence"') == 1


def node_or_skip() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's script cannot be checked")
    return node


def test_the_pages_script_parses(tmp_path):
    node = node_or_skip()
    script = tmp_path / "audit.js"
    script.write_text(PageParts(render_page(page_items(), "eng-fra", "")).scripts[0], encoding="utf-8")
    result = subprocess.run([node, "--check", str(script)], check=False, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr


# a DOM as small as the script uses: items with data attributes, a mark and buttons; localStorage; Blob and URL
HARNESS = r"""
const fs = require("fs");
const vm = require("vm");
const script = fs.readFileSync(process.argv[2], "utf8");
const data = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
function element(dataset) {
  const classes = new Set();
  return {dataset: dataset || {}, textContent: "", attributes: {}, handlers: {},
    classList: {add: (name) => classes.add(name), remove: (name) => classes.delete(name),
      has: (name) => classes.has(name)},
    setAttribute(name, value) { this.attributes[name] = value; },
    addEventListener(type, handler) { this.handlers[type] = handler; },
    scrollIntoView() {}, click() {}, remove() {}};
}
const items = data.items.map((dataset) => {
  const item = element(dataset);
  item.mark = element();
  item.buttons = ["right", "wrong", "partial"].map((judgement) => element({judgement}));
  item.querySelector = () => item.mark;
  item.querySelectorAll = () => item.buttons;
  return item;
});
const byId = {progress: element(), download: element(), "next-unjudged": element()};
const listeners = {};
const stored = {};
let downloaded = null;
let downloadName = null;
globalThis.localStorage = {getItem: (key) => (key in stored ? stored[key] : null),
  setItem: (key, value) => { stored[key] = String(value); }};
globalThis.document = {body: Object.assign(element({audit: data.pair, pair: data.pair}), {appendChild() {}}),
  querySelectorAll: () => items, getElementById: (id) => byId[id],
  addEventListener: (type, handler) => { listeners[type] = handler; },
  createElement: () => { const link = element(); link.click = () => { downloadName = link.download; }; return link; }};
globalThis.Blob = class { constructor(parts) { this.text = parts.join(""); } };
URL.createObjectURL = (blob) => { downloaded = blob.text; return "blob:audit"; };
URL.revokeObjectURL = () => {};
const press = (key) => listeners.keydown({key, target: {tagName: "BODY"}, preventDefault() {}});
vm.runInThisContext(script);
["1", "w", "k", "p", "j", "3", "u", "n"].forEach(press);
const selected = items.findIndex((item) => item.classList.has("current"));
items[2].buttons[0].handlers.click({stopPropagation() {}});
const pressed = items[2].buttons.map((button) => button.attributes["aria-pressed"]);
vm.runInThisContext(script);  // a reload: the judgements come back from localStorage
byId.download.handlers.click();
console.log(JSON.stringify({selected, pressed, progress: byId.progress.textContent, downloaded, downloadName,
  marks: items.map((item) => item.mark.textContent)}));
"""


def test_keys_buttons_storage_and_download_work_in_node(tmp_path):
    node = node_or_skip()
    items = page_items()
    extra = items.iloc[[2]].assign(bead=1)
    items = pd.concat([items, with_item_ids(extra.drop(columns=["item_id", "kind"]), "sentence")], ignore_index=True)
    parts = PageParts(render_page(items, "eng-fra", ""))
    (tmp_path / "audit.js").write_text(parts.scripts[0], encoding="utf-8")
    (tmp_path / "data.json").write_text(json.dumps({"items": parts.items, "pair": "eng-fra"}), encoding="utf-8")
    (tmp_path / "harness.js").write_text(HARNESS, encoding="utf-8")
    files = [str(tmp_path / name) for name in ("harness.js", "audit.js", "data.json")]
    result = subprocess.run([node, *files], check=False, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    state = json.loads(result.stdout)
    # 1: item 0 right; w: item 1 wrong; k: back to 1; p: item 1 partial; j, 3: item 3 partial (the last stays
    # selected); u: cleared; n: the next unjudged is item 2, then judged right with its button
    assert state["selected"] == 2 and state["pressed"] == ["true", "false", "false"]
    assert state["marks"] == ["right", "partial", "right", ""]
    assert state["progress"] == "3 of 4 judged (right 2, partial 1, wrong 0)"
    assert state["downloadName"] == "judgements-eng-fra.tsv"
    read = read_judgements({"download": state["downloaded"]}, set(items["item_id"]))
    assert read.counts == {"ok": 3} and read.judged["judgement"].tolist() == ["right", "partial", "right"]
    lines = [line.split("\t") for line in state["downloaded"].splitlines()]
    assert lines[0] == list(JUDGEMENT_COLUMNS) and lines[1][:6] == [
        items["item_id"][0], "document", "a.example", "eng-fra", "http://a.example/en", "http://a.example/fr"]


# ---- judgements and precision ---------------------------------------------------------------------------------
def test_wilson_interval_matches_known_values():
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(2, 10) == pytest.approx(tuple(1 - bound for bound in reversed(wilson_interval(8, 10))))
    assert wilson_interval(40, 50) == pytest.approx((0.6696, 0.8876), abs=1e-4)
    assert all(math.isnan(bound) for bound in wilson_interval(0, 0))


def judgements_text(rows: list[tuple[str, str]], header: str = "\t".join(JUDGEMENT_COLUMNS)) -> str:
    return header + "\n" + "".join(f"{item}\tdocument\ts\teng-fra\tu\tv\t{judgement}\t2026-01-01\n"
                                   for item, judgement in rows)


def test_judgements_read_back_account_for_every_line():
    known = {"d-1", "d-2", "d-3", "d-4"}
    text = judgements_text([("d-1", "wrong"), ("d-1", "Right"), ("d-2", "partial"), ("d-9", "right"),
                            ("d-3", "maybe"), ("d-4", "")])
    text = "\ufeff" + text.replace("\n", "\r\n") + "\r\n" + "d-4\tdocument\ts\teng-fra\tu\tv\twrong\tx\ty\n"
    more = "item_id\tjudgement\nd-3\twrong\n"  # a second file (the columns it names, in any order)
    read = read_judgements({"first.tsv": text, "second.tsv": more}, known)
    assert read.counts == {"ok": 3, "superseded": 1, "unknown_item": 1, "unknown_judgement": 1, "not_judged": 1,
                           "malformed_line": 1}
    assert dict(zip(read.judged["item_id"], read.judged["judgement"])) == {"d-1": "right", "d-2": "partial",
                                                                          "d-3": "wrong"}
    assert read.problems[0].startswith("first.tsv:5: unknown item")
    trimmed = "item_id\tkind\tjudgement\tjudged_at\nd-1\tdocument\tright\n"  # a spreadsheet drops empty last cells
    assert read_judgements({"t": trimmed}, known).counts == {"ok": 1}
    with pytest.raises(ValueError, match="not a judgements file"):
        read_judgements({"notes.txt": "d-1 right\n"}, known)


def test_precision_per_site_pooled_and_weighted():
    items = pd.DataFrame({"item_id": [f"s-{n}" for n in range(7)], "kind": "sentence", "lang_pair": "eng-fra",
                          "site": ["a"] * 4 + ["b"] * 2 + ["c"], "site_exported": [30] * 4 + [10] * 2 + [5]})
    judged = pd.DataFrame({"item_id": ["s-0", "s-1", "s-2", "s-3", "s-4", "s-5"],
                           "judgement": ["right", "right", "partial", "wrong", "right", "right"]})
    table = precision_table(items, judged).set_index("site")
    assert table.index.tolist() == [ALL_SITES, "a", "b", "c"]
    overall = table.loc[ALL_SITES]
    assert (overall["exported"], overall["sampled"], overall["judged"], overall["right"]) == (45, 7, 6, 4)
    assert overall["precision"] == pytest.approx(4 / 6) and overall["precision_with_partial"] == pytest.approx(5 / 6)
    assert (overall["precision_low"], overall["precision_high"]) == pytest.approx(wilson_interval(4, 6))
    assert overall["weighted_precision"] == pytest.approx((0.5 * 30 + 1.0 * 10) / 40)  # c judged nothing
    assert table.loc["c", "judged"] == 0 and math.isnan(table.loc["c", "precision"])
    assert precision_table(items, judged.iloc[:0]).empty  # nothing judged: no rows


# ---- the job end to end -----------------------------------------------------------------------------------------
DOCUMENT_SCHEMA = ("host string, src_url string, trg_url string, src_lang string, trg_lang string, site string, "
                   "p_parallel_content double, status string, src_text string, trg_text string, sentence_pairs int, "
                   "lang_pair string")
SENTENCE_SCHEMA = ("site string, host string, src_url string, trg_url string, src_lang string, trg_lang string, bead int, "
                   "bead_type string, src_text string, trg_text string, score double, reason string, lang_pair string")


class WriteBitext(Job):
    name = "write-bitext-test"
    description = "writes the bitext tables the test hands it"
    outputs = ("bitext_documents", "bitext_sentences")
    rows: ClassVar[dict[str, list[tuple]]] = {}

    def process(self) -> None:
        for table, schema in (("bitext_documents", DOCUMENT_SCHEMA), ("bitext_sentences", SENTENCE_SCHEMA)):
            self.write_table(self.spark.createDataFrame(self.rows[table], schema), table)


def bitext_rows() -> dict[str, list[tuple]]:
    """eng-fra: a.example 4 exported documents (3 kept sentence pairs and a dropped one each) and one not
    exported, b.example one with hostile text (2 sentence pairs), www.c.example one (1); deu-fra:
    d.example one (1)."""
    documents, sentences = [], []

    def add(host, site, name, status, kept, pair=("eng", "fra"), text="Text."):
        src, trg = f"http://{host}/{pair[0]}/{name}", f"http://{host}/{pair[1]}/{name}"
        label = "-".join(pair)
        documents.append((host, src, trg, *pair, site, 0.9, status, text, "Texte.", kept, label))
        for bead in range(kept):
            sentences.append((site, host, src, trg, *pair, bead, "1-1", f"{text} {bead}", f"Texte {bead}.", 0.8, None, label))
        if status == "ok":
            sentences.append((site, host, src, trg, *pair, kept, "1-1", "Same.", "Same.", 0.9, "identical_sides", label))

    for number in range(4):
        add("a.example", "a.example", f"page{number}", "ok", 3)
    add("a.example", "a.example", "empty", "no_sentence_pairs_kept", 0)
    add("b.example", "b.example", "hostile", "ok", 2, text=HOSTILE.replace("\ud800", ""))
    add("www.c.example", "c.example", "one", "ok", 1)
    add("d.example", "d.example", "one", "ok", 1, pair=("deu", "fra"))
    return {"bitext_documents": documents, "bitext_sentences": sentences}


@pytest.fixture(scope="module")
def bitext_root(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("audit-root")
    WriteBitext.rows = bitext_rows()
    run_job(WriteBitext, spark, ["--root", str(root)])
    return root


SAMPLE = ["--langs", "en-fr,de-fr", "--per-site", "2", "--max-sites", "2", "--random-seed", "3"]


@pytest.mark.slow
def test_audit_samples_per_site_then_reads_judgements_back(spark, bitext_root, tmp_path):
    root = str(bitext_root)
    report = run_job(AuditJob, spark, ["--root", root, *SAMPLE])
    # eng-fra: 6 documents + 15 sentence pairs exported; a.example and b.example audited (c.example: 2 left out)
    assert report["balanced"] and report["inputs"] == {"exported pairs (documents and sentences)": 21 + 2}
    assert report["kept"] == 7 + 2 and report["filtered"] == {"not_sampled": 12, "site_not_audited": 2}
    assert report["by_pair"]["eng-fra"]["kept"] == 7 and report["by_pair"]["deu-fra"]["kept"] == 2
    assert report["metrics"]["by_pair"]["eng-fra"]["sampled_documents"] == 3
    items = read_items((bitext_root / "audit" / "items-eng-fra.tsv").read_text(encoding="utf-8"))
    assert items.groupby(["kind", "site"]).size().to_dict() == {
        ("document", "a.example"): 2, ("document", "b.example"): 1, ("sentence", "a.example"): 2,
        ("sentence", "b.example"): 2}
    assert set(items.loc[items["kind"] == "sentence", "site_exported"]) == {12, 2}
    page = (bitext_root / "audit" / "audit-eng-fra.html").read_text(encoding="utf-8")
    assert all(f'data-id="{identifier}"' in page for identifier in items["item_id"])
    assert len(PageParts(page).scripts) == 1 and "&lt;script&gt;alert(&quot;owned&quot;)" in page
    assert (bitext_root / "audit" / "audit-deu-fra.html").exists()

    again = run_job(AuditJob, spark, ["--root", root, *SAMPLE, "--force"])  # the same seed draws the same pairs
    assert again["kept"] == 9 and read_items(
        (bitext_root / "audit" / "items-eng-fra.tsv").read_text(encoding="utf-8")).equals(items)

    by = {(kind, site): group["item_id"].tolist() for (kind, site), group in items.groupby(["kind", "site"])}
    judged = [(by["document", "a.example"][0], "wrong"), (by["document", "a.example"][0], "right"),
              (by["document", "a.example"][1], "partial"), (by["document", "b.example"][0], "wrong"),
              (by["sentence", "a.example"][0], "right"), (by["sentence", "a.example"][1], "wrong"),
              (by["sentence", "b.example"][0], "right"), (by["sentence", "b.example"][1], "right"),
              ("d-0000000000000000", "right"), (by["sentence", "b.example"][1], "fine"),
              (by["sentence", "b.example"][1], "")]
    judgements = tmp_path / "judgements-eng-fra.tsv"
    judgements.write_text(judgements_text(judged) + "too\tmany\tfields\t.\t.\t.\t.\t.\t.\n", encoding="utf-8")
    report = run_job(AuditJob, spark, ["--root", root, "--judgements", str(judgements)])
    assert report["balanced"] and report["inputs"] == {"judgement lines": 12}
    assert report["kept"] == 7 and report["bad"] == {"unknown_item": 1, "unknown_judgement": 1, "malformed_line": 1}
    assert report["filtered"] == {"superseded": 1, "not_judged": 1}
    precision = report["metrics"]["precision"]
    assert set(precision) == {"eng-fra"}  # deu-fra: nothing judged
    documents, sentences = precision["eng-fra"]["document"][ALL_SITES], precision["eng-fra"]["sentence"][ALL_SITES]
    assert (documents["right"], documents["partial"], documents["wrong"]) == (1, 1, 1)
    assert documents["precision_with_partial"] == pytest.approx(2 / 3)
    assert sentences["precision"] == 0.75 and sentences["weighted_precision"] == pytest.approx((0.5 * 12 + 2) / 14)
    assert precision["eng-fra"]["sentence"]["b.example"]["precision_low"] == pytest.approx(wilson_interval(2, 2)[0])
    markdown = (bitext_root / "audit" / "precision.md").read_text(encoding="utf-8")
    assert "## eng-fra: sentence pairs" in markdown and "| (all sites) | 14 | 4 | 4 | 3 | 0 | 1 |" in markdown
    assert "unknown_item 1" in markdown
    table = pd.read_csv(bitext_root / "audit" / "precision.tsv", sep="\t")
    assert len(table) == 6 and set(table["site"]) == {ALL_SITES, "a.example", "b.example"}


def test_judgements_need_a_sample_and_a_judgements_file(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("looked fine\n", encoding="utf-8")
    root = tmp_path / "root"
    with pytest.raises(ConfigError, match="no sample under"):
        AuditJob().run(["--root", str(root), "--judgements", str(notes)])
    (root / "audit").mkdir(parents=True)
    (root / "audit" / "items-eng-fra.tsv").write_text(items_tsv(page_items().assign(site_exported=3)),
                                                      encoding="utf-8")
    with pytest.raises(ConfigError, match="not a judgements file"):
        AuditJob().run(["--root", str(root), "--judgements", str(notes)])
    with pytest.raises(ConfigError, match="no such file"):
        AuditJob().run(["--root", str(root), "--judgements", str(tmp_path / "missing.tsv")])
