"""Every `parascout <job> ...` and `spark-submit jobs/<job>.py ...` line in README.md names a real job and only
options its parser accepts (optional parts in [brackets] included, `a|b` alternatives each), so the README's
examples do not drift from the code. `make readme-check` runs the quick start for real."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from parascout.jobs.cli import discover

README = Path(__file__).resolve().parent.parent / "README.md"
FENCE = re.compile(r"```bash\n(.*?)```", re.DOTALL)


def readme_commands() -> list[str]:
    """The README's shell commands (continuations joined, comments dropped) that run a parascout job."""
    commands = []
    for block in FENCE.findall(README.read_text(encoding="utf-8")):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line.startswith(("parascout ", "spark-submit ")) and " jobs/" in f" {line}" or \
                    line.startswith("parascout "):
                commands.append(line)
    return commands


def variants(words: list[str]) -> list[list[str]]:
    """The command without and with its [optional] parts; each `a|b` alternative spelled out."""
    text = plain = " ".join(words)
    while re.search(r"\[[^\[\]]*\]", plain):  # innermost first: [--a X [--b Y]]
        plain = re.sub(r"\[[^\[\]]*\]", " ", plain)
    full = re.sub(r"[\[\]]", " ", text)
    found = []
    for candidate in (plain, full):
        for choice in (0, -1):
            found.append([w.split("|")[choice] if "|" in w and not w.startswith(("'", '"')) else w
                          for w in candidate.split()])
    return found


def job_and_arguments(command: str) -> tuple[str, list[str]]:
    words = shlex.split(command.replace("$C", "").replace("$R", "s3://BUCKET/root"))
    if words[0] == "parascout":
        return words[1], words[2:]
    script = next(w for w in words if w.startswith("jobs/") and w.endswith(".py"))
    return Path(script).stem.replace("_", "-"), words[words.index(script) + 1:]


COMMANDS = readme_commands()


def test_the_readme_has_commands():
    assert len(COMMANDS) > 30


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
