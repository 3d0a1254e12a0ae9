"""CONTRIBUTING.md's newcomer tasks done once, on a toy stage: a stage's knobs in one config dataclass (set from
--conf or a generated option, recorded in the report), a job declaring what it reads so the pipeline places it, and
every input record counted."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import pytest

from parascout.jobs.base import Job
from parascout.jobs.cli import discover
from parascout.jobs.errors import ConfigError
from parascout.jobs.pipeline import pipeline_order
from parascout.udfs.common.stage_config import StageConfig, knob


@dataclass(frozen=True)
class TidyConfig(StageConfig):
    """The toy stage's knobs: the one home of each (no module constant)."""

    min_words: int = knob(3, "a paragraph of fewer words is dropped as too_short", low=0)
    max_digit_share: float = knob(0.5, "a paragraph with more of its characters digits is dropped as numbers",
                                  option=True, low=0, high=1)


class TidyParagraphs(Job):
    """Keeps the paragraphs of a text file (one per line) that read as prose."""

    name = "tidy-paragraphs"
    description = "keep the paragraphs of a file that read as prose"
    uses_spark = False
    input_paths = ("paragraphs",)
    path_artifacts = MappingProxyType({"paragraphs": ("texts",)})  # a file of the texts table's paragraphs
    stage_configs = (("tidy", TidyConfig),)

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--paragraphs", required=True, help="a text file, one paragraph per line")

    def process(self):
        knobs = self.args.tidy
        lines = Path(self.args.paragraphs).read_text(encoding="utf-8").splitlines()
        self.report.input("paragraphs", len(lines))
        for line in lines:
            digits = sum(char.isdigit() for char in line) / max(len(line), 1)
            if digits > knobs.max_digit_share:
                self.report.filtered("numbers", 1)
            elif len(line.split()) < knobs.min_words:
                self.report.filtered("too_short", 1)
            else:
                self.report.kept(1)


def test_a_new_stage_with_its_knobs_runs_counts_every_record_and_takes_its_place_in_the_pipeline(tmp_path):
    paragraphs = tmp_path / "paragraphs.txt"
    paragraphs.write_text("A paragraph of prose.\nToo short\n2024 12 05 31 17\nAnother one, a little longer.\n",
                          encoding="utf-8")
    conf = tmp_path / "tidy.yaml"
    conf.write_text(json.dumps({"tidy-paragraphs": {"tidy": {"min_words": 4}}}), encoding="utf-8")
    root = str(tmp_path / "root")
    report = TidyParagraphs().run(["--root", root, "--paragraphs", str(paragraphs), "--conf", str(conf)])
    assert report["args"]["tidy"] == {"min_words": 4, "max_digit_share": 0.5}
    assert (report["kept"], report["filtered"]) == (2, {"numbers": 1, "too_short": 1}) and report["balanced"]
    # the option generated from the field: a looser digit share keeps the line of numbers (5 words)
    report = TidyParagraphs().run(["--root", root, "--paragraphs", str(paragraphs), "--conf", str(conf),
                                   "--max-digit-share", "0.9", "--force"])
    assert report["args"]["tidy"]["max_digit_share"] == 0.9 and report["kept"] == 3
    with pytest.raises(ConfigError, match=r"--max-digit-share 1.5: TidyConfig.max_digit_share must be \[0, 1\]"):
        TidyParagraphs().run(["--root", root, "--paragraphs", str(paragraphs), "--max-digit-share", "1.5"])
    conf.write_text(json.dumps({"tidy-paragraphs": {"tidy": {"min_word": 4}}}), encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key min_word; valid: min_words, max_digit_share"):
        TidyParagraphs().run(["--root", root, "--paragraphs", str(paragraphs), "--conf", str(conf)])
    order = pipeline_order({**discover(), TidyParagraphs.name: TidyParagraphs})
    assert order.index("fetch-docs") < order.index("tidy-paragraphs")  # it reads what fetch-docs writes
