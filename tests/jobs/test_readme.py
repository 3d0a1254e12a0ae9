"""Every `parascout <job> ...` and `spark-submit jobs/<job>.py ...` line in README.md names a real job and only
options its parser accepts (optional parts in [brackets] included, `a|b` alternatives each), so the README's
examples do not drift from the code; no example writes into the demo's root; every Python snippet compiles.
`make readme-check` (tests/support/readme_check.py, the same extraction) runs them all for real on a tiny archive."""
from __future__ import annotations

import pytest

from parascout.jobs.cli import discover
from parascout.jobs.pipeline import pipeline_order
from tests.support.readme_check import job_and_arguments, plan, readme_commands, readme_steps, variants

COMMANDS = readme_commands()


def test_the_readme_walks_through_the_pipeline_in_an_order_that_works():
    """Each job of the walk-through first appears after the jobs that write what it reads (jobs.pipeline): fetch-docs
    before rank-pairs, as ranking uses the documents' links, images and paragraph profiles."""
    order = pipeline_order(discover())
    jobs = [job_and_arguments(command)[0] for command in COMMANDS]
    firsts = [job for index, job in enumerate(jobs) if job in order and job not in jobs[:index]]
    walk = firsts[:firsts.index("replay-crawl") + 1]
    assert {"scan-cdx", "fetch-docs", "rank-pairs", "verify-pairs", "export-bitext"} <= set(walk)
    assert walk == sorted(walk, key=order.index)


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_parses(command):
    registry = discover()
    job, arguments = job_and_arguments(command)
    if job == "spark-properties":
        return
    assert job in registry, f"README names a job that does not exist: {job}"
    parser = registry[job]().build_parser()
    for words in variants(arguments):
        words = [w for w in words if w != "..."]
        _, unknown = parser.parse_known_args(words)
        assert not unknown, f"{job}: the parser does not know {unknown} (README: {command})"


def test_examples_never_write_into_the_demos_root():
    refused = [f"README:{step.line} {step.text}" for step in readme_steps() if plan(step, shared=True).refuse]
    assert not refused, "these examples would overwrite make demo's tables (give them their own --root):\n" + \
        "\n".join(refused)


def test_python_snippets_compile():
    snippets = [step for step in readme_steps() if step.kind == "python"]
    assert snippets
    for step in snippets:
        compile(step.text, f"README.md:{step.line}", "exec")


def test_python_snippets_import_what_exists():
    """Each snippet's imports run (a module moved under parascout. or a renamed function fails here, cheaply)."""
    for step in (step for step in readme_steps() if step.kind == "python"):
        imports = "\n".join(line for line in step.text.splitlines() if line.startswith(("import ", "from ")))
        exec(compile(imports, f"README.md:{step.line}", "exec"), {})  # noqa: S102 (our own README)


@pytest.mark.slow
def test_quick_readme_run(tmp_path, capsys):
    """`readme_check.py --quick`: the README steps that start no Spark, run as written on a tiny archive."""
    from tests.support.readme_check import main

    assert main(["--quick", "--keep", str(tmp_path)]) == 0, capsys.readouterr().out
    printed = capsys.readouterr().out
    assert "[ok]     README:" in printed and "make-sample-archive" in printed and "align" in printed
    assert (tmp_path / "parascout" / "OUTPUT.tsv").stat().st_size > 0  # align aligned some of the archive's pairs


def test_extraction_joins_continuations_and_drops_comments():
    text = "```bash\n# a comment\nparascout x --a 1 \\\n    --b 2   # why\nmake demo\n```\n```python\nprint(1)\n```\n"
    steps = readme_steps(text)
    assert [(s.kind, s.text, s.line) for s in steps] == [
        ("shell", "parascout x --a 1 --b 2", 3), ("shell", "make demo", 5), ("python", "print(1)\n", 8)]


def test_plan_scales_skips_and_keeps_the_rest_as_written():
    from tests.support.readme_check import Step

    def planned(text):
        return plan(Step("shell", text, 1), shared=False)

    archive = planned("parascout make-sample-archive --out out/x --hosts 60 --seed 42")
    assert archive.command == "parascout make-sample-archive --out out/x --hosts 10 --seed 42 --pages-per-host 20"
    assert planned("parascout align --method strand|wmt16 INPUT.tsv OUTPUT.tsv [--pair-model DIR]").command == \
        "parascout align --method strand INPUT.tsv OUTPUT.tsv"
    assert "object store" in planned("parascout scan-cdx --root out/s --cdx s3://commoncrawl/x").skip
    assert "network" in planned("parascout scan-cdx --root out/s --cdx-api --url 'a.is/*'").skip
    assert "placeholder DIR" in planned("parascout train-lexicon --out DIR").skip
    assert "maintainers" in planned("parascout train-pairs --positives ../shared/data/x --out m").skip
    assert planned("parascout rank-pairs --root out/demo --langs en,fr").refuse
    assert not planned("parascout train-url2lang --urls out/demo/urls --out models/u").refuse
