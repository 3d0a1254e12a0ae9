"""A newcomer's first hour, run for real: README.md's shell commands and Python snippets, in README order, in a
fresh copy of the checkout, on a tiny sample archive. `make readme-check` runs it; it exits 1 when a step fails.

What it changes, as a newcomer trying the README would, and says so on each step it changed:
- the size: `make-sample-archive` and `demo` get TINY hosts and pages, training one epoch;
- `make demo` becomes the command it runs (`parascout demo --out out/demo`, with the Bible text where ../shared
  has it), since the copy has no `.venv` of its own (the checkout's `.venv` runs everything, as if activated);
- [optional parts] are left out and the first of `a|b` is taken (tests/jobs/test_readme.py parses every variant);
- placeholder inputs it can provide are written before their step (INPUT.tsv: the demo's URLs, `lang<TAB>url`).
Skipped, with the reason: commands that need a cluster's object store or the network (s3://, gs://, https://, the
CDX API, a Hugging Face hub id), other placeholders for your own files (ALL-CAPS words: DIR, FILE, BUCKET …),
make targets other than demo, and — without ../shared beside the checkout, or with --no-shared — commands that
read the maintainers' data there. Failed: a command that exits non-zero, a job example that writes into the
demo's root (it is not run), and a step after which the demo's tables are no longer those the demo wrote.

Python snippets run with this venv's interpreter but the PATH of a shell that did not activate it (no
PYSPARK_PYTHON either), so a snippet whose Spark workers need pandas must say how they find it.

`--quick` (what `make test` runs, marked slow) keeps only the steps that start no Spark — the make-sample-archive
examples, training on an archive's truth, `align` — with the demo's archive standing in for `make demo`.

    .venv/bin/python tests/support/readme_check.py [--quick] [--keep DIR] [--no-shared] [--only REGEX]
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", re.DOTALL | re.MULTILINE)
OPTIONAL = re.compile(r"\[[^\[\]]*\]")
#: a|b outside quotes: one word's alternatives
ALTERNATIVES = re.compile(r"(?<![\S])([^\s'\"|\[\]]+(?:\|[^\s'\"|\[\]]+)+)")
#: ALL-CAPS words (DIR, FILE, BUCKET, INPUT.tsv) stand for the reader's own values; CC-MAIN-2024-33 is not one
PLACEHOLDER = re.compile(r"(?<![\w$-])[A-Z][A-Z_]{2,}(?![\w-])")
DEMO_ROOT = "out/demo"
TINY = {"--hosts": "10", "--pages-per-host": "20"}  # 10 hosts: the smallest seed-42 archive with en-fr pairs in both texts
TINY_DEMO = {"--train-hosts": "10", "--train-epochs": "1"}
TINY_TRAINING = {"--max-epochs": "1"}
STEP_TIMEOUT_S = 900
QUICK_SKIP = "quick: starts Spark or needs make demo's tables (the full run does it)"
CLOUD_TOOLS = {"aws", "gcloud", "gsutil"}


# ---- the README's steps: one extraction, also what tests/jobs/test_readme.py parses ---------------------------
@dataclass(frozen=True)
class Step:
    kind: str  # "shell" (one command, continuations joined, comment dropped) or "python" (a whole block)
    text: str
    line: int  # where it starts in README.md


def readme_steps(text: str | None = None) -> list[Step]:
    """The README's shell commands and Python blocks, in README order."""
    text = README.read_text(encoding="utf-8") if text is None else text
    steps = []
    for block in BLOCK.finditer(text):
        kind, body = block.group(1), block.group(2)
        first = text.count("\n", 0, block.start(2)) + 1
        if kind == "python":
            steps.append(Step("python", body, first))
            continue
        pending, start = [], first
        for number, raw in enumerate(body.splitlines(), start=first):
            if not pending:
                start = number
            line = re.sub(r"(^|\s+)#.*$", "", raw.rstrip())
            if line.endswith("\\"):
                pending.append(line[:-1])
                continue
            command = " ".join(part.strip() for part in [*pending, line] if part.strip())
            pending = []
            if command:
                steps.append(Step("shell", command, start))
    return steps


def is_job_command(command: str) -> bool:
    """`parascout <job> …` or `spark-submit … jobs/<job>.py …`."""
    return command.startswith("parascout ") or (command.startswith("spark-submit ") and " jobs/" in f" {command}")


def readme_commands() -> list[str]:
    """The README's shell commands that run a parascout job."""
    return [step.text for step in readme_steps() if step.kind == "shell" and is_job_command(step.text)]


def drop_optional(text: str) -> str:
    """The command without its [optional] parts (innermost first: [--a X [--b Y]])."""
    while OPTIONAL.search(text):
        text = OPTIONAL.sub(" ", text)
    return " ".join(text.split())


def choose_alternative(text: str, choice: int) -> str:
    """Each unquoted `a|b|c` word replaced by one alternative (0: the first, -1: the last)."""
    return ALTERNATIVES.sub(lambda match: match.group(1).split("|")[choice], text)


def variants(words: list[str]) -> list[list[str]]:
    """The command without and with its [optional] parts; the first and the last `a|b` alternative of each."""
    text = " ".join(words)
    return [choose_alternative(candidate, choice).split()
            for candidate in (drop_optional(text), re.sub(r"[\[\]]", " ", text)) for choice in (0, -1)]


def job_and_arguments(command: str) -> tuple[str, list[str]]:
    """(job name, its arguments) of a job command; the runbook's $C / $R stand for a conf and an s3:// root."""
    words = shlex.split(command.replace("$C", "").replace("$R", "s3://BUCKET/root"))
    if words[0] == "parascout":
        return words[1], words[2:]
    script = next(w for w in words if w.startswith("jobs/") and w.endswith(".py"))
    return Path(script).stem.replace("_", "-"), words[words.index(script) + 1:]


# ---- what a newcomer changes, skips or gets told off for ------------------------------------------------
@dataclass
class Plan:
    step: Step
    command: str = ""  # what runs (shell) ; empty when skipped
    changes: tuple[str, ...] = ()
    skip: str = ""  # why it does not run
    refuse: str = ""  # why it fails without running


def set_option(command: str, option: str, value: str) -> str:
    """`command` with `option value` (replaced where present, else appended)."""
    pattern = re.compile(rf"(?<!\S){re.escape(option)}(?:\s+|=)\S+")
    if pattern.search(command):
        return pattern.sub(f"{option} {value}", command)
    return f"{command} {option} {value}"


def option_value(command: str, option: str) -> str | None:
    match = re.search(rf"(?<!\S){re.escape(option)}(?:\s+|=)(\S+)", command)
    return match.group(1).strip("'\"") if match else None


def inside_demo_root(path: str | None) -> bool:
    return path is not None and os.path.normpath(path).split(os.sep)[:2] == DEMO_ROOT.split("/")


def plan(step: Step, shared: bool, quick: bool = False) -> Plan:
    """What runs for a README step, or why it is skipped or refused (`quick`: only what starts no Spark)."""
    if step.kind == "python":
        return Plan(step, skip=QUICK_SKIP) if quick else Plan(step, command=step.text)
    command = choose_alternative(drop_optional(step.text), 0)
    text = " --text-corpus ../shared/data/parallel-text/bible" if shared else ""
    if command.startswith("make "):
        target = command.split()[1]
        if target != "demo":
            return Plan(step, skip=f"`make {target}`: a make target, not an example (run it yourself)")
        if quick:
            return scaled(Plan(step, f"parascout make-sample-archive --out {DEMO_ROOT}/archive{text}",
                               ("quick: make demo -> only its archive",)))
        return scaled(Plan(step, f"parascout demo --out {DEMO_ROOT}{text}", ("make demo -> the command it runs",)))
    if command.split()[0] in CLOUD_TOOLS or command.startswith("deploy/"):
        return Plan(step, skip="needs a cloud account")
    if re.search(r"\b(s3|gs)://|\$R\b", command):
        return Plan(step, skip="needs a cluster's object store (s3://, gs://)")
    if "--cdx-api" in command or re.search(r"\bhttps?://", command):
        return Plan(step, skip="needs the network")
    model = option_value(command, "--base-model")
    if model and not model.startswith((".", "/", "out/", "models/")):
        return Plan(step, skip=f"--base-model {model}: a Hugging Face hub id, downloaded (needs the network)")
    placeholders = [word for word in PLACEHOLDER.findall(command) if word not in PROVIDED]
    if placeholders:
        return Plan(step, skip=f"placeholder {', '.join(placeholders)}: your own input")
    if "../shared/" in command and not shared:
        return Plan(step, skip="reads the maintainers' data (../shared/data beside the checkout): absent")
    if is_job_command(command):
        job, _ = job_and_arguments(command)
        written = [option_value(command, option) for option in ("--root", "--out")]
        if job != "demo" and any(inside_demo_root(path) for path in written):
            return Plan(step, command, refuse=f"writes into the demo's root {DEMO_ROOT}: an example needs its own root")
        if quick and starts_spark(job):
            return Plan(step, skip=QUICK_SKIP)
    return scaled(Plan(step, command))


def starts_spark(job: str) -> bool:
    from parascout.jobs.cli import discover

    registry = discover()
    return job not in registry or registry[job].uses_spark


def missing_demo_input(command: str, workspace: Path) -> str | None:
    """The first out/... input a command names that is not there (--quick writes only the demo's archive, and the
    Spark steps it skips write the walk-through's tables)."""
    outputs = {option_value(command, option) for option in ("--out", "--root")}
    for path in re.findall(rf"(?<!\S){re.escape(DEMO_ROOT.split('/')[0])}/\S+", command):
        if path in outputs:
            continue
        if not (workspace / path.strip("'\"")).exists():
            return path
    return None


def scaled(planned: Plan) -> Plan:
    """The tiny sizes for the commands that make an archive or train a model."""
    command, changes = planned.command, list(planned.changes)
    if not is_job_command(command):
        return planned
    job, _ = job_and_arguments(command)
    sizes = {"make-sample-archive": TINY, "demo": {**TINY, **TINY_DEMO},
             "train-pairs": TINY_TRAINING, "train-url2lang": TINY_TRAINING}.get(job, {})
    for option, value in sizes.items():
        if option_value(command, option) != value:
            command = set_option(command, option, value)
            changes.append(f"{option} {value}")
    planned.command, planned.changes = command, tuple(changes)
    return planned


def write_align_input(workspace: Path) -> None:
    """INPUT.tsv for `parascout align`: the demo archive's HTML pages as `lang<TAB>url`."""
    import pandas as pd

    pages = pd.read_parquet(workspace / DEMO_ROOT / "archive" / "truth" / "pages.parquet", columns=["lang", "url"])
    pages.dropna().to_csv(workspace / "INPUT.tsv", sep="\t", header=False, index=False)


#: placeholder -> how to provide it before its step (None: an output, nothing to provide)
PROVIDED = {"INPUT": write_align_input, "OUTPUT": None}


# ---- running --------------------------------------------------------------------------------------------
def copy_checkout(target: Path) -> None:
    """The checkout's files (tracked and untracked, not ignored), as a fresh clone with local edits would hold."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_symlink():  # parascout/jobs -> ../jobs ...
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).symlink_to(source.readlink())
        elif source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def shared_folder() -> Path | None:
    data = os.environ.get("PARASCOUT_SHARED_DATA")
    folder = Path(data).parent if data else REPO.parent / "shared"
    return folder if (folder / "data").is_dir() else None


def environments() -> tuple[dict, dict]:
    """(shell, python): the shell as after `. .venv/bin/activate`; Python snippets without the venv's PATH."""
    venv_bin = str(Path(sys.executable).parent)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "VIRTUAL_ENV"))}
    plain_path = os.pathsep.join(p for p in base.get("PATH", "").split(os.pathsep) if p != venv_bin)
    shell = {**base, "PATH": venv_bin + os.pathsep + plain_path, "VIRTUAL_ENV": str(Path(venv_bin).parent)}
    return shell, {**base, "PATH": plain_path}


def demo_tables(workspace: Path) -> dict[str, str]:
    """The demo root's table manifests and model metadata: what an example must not change."""
    root = workspace / DEMO_ROOT
    found = {}
    for path in sorted([*root.glob("*/_manifest.json"), *root.glob("models/*/parascout_*.json")]):
        found[str(path.relative_to(root).parent)] = path.read_text(encoding="utf-8")
    return found


def first_error_line(output: str) -> str:
    """The line that says what went wrong: a traceback's exception, else the first error-like line, else the last."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if any(line.startswith("Traceback") for line in lines):
        exceptions = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Exit)\b", line)]
        if exceptions:
            return exceptions[-1]
    for line in lines:
        if re.search(r"\b(error|failed|not found|no such file)\b", line, re.IGNORECASE) and " WARN " not in line:
            return line
    return lines[-1] if lines else "(no output)"


def run_step(planned: Plan, workspace: Path, logs: Path, index: int, envs: tuple[dict, dict]) -> tuple[bool, str]:
    """Run one planned step; (ok, the first error line)."""
    log = logs / f"{index:02d}-line{planned.step.line}.log"
    if planned.step.kind == "python":
        script = logs / f"{index:02d}-line{planned.step.line}.py"
        script.write_text(planned.command, encoding="utf-8")
        argv, env = [sys.executable, str(script)], envs[1]
    else:
        for name, provide in PROVIDED.items():
            if provide and re.search(rf"(?<![\w-]){name}\b", planned.command):
                try:
                    provide(workspace)
                except OSError as error:
                    log.write_text(str(error), encoding="utf-8")
                    return False, f"cannot provide {name}: {error}"
        argv, env = ["bash", "-c", planned.command], envs[0]
    try:
        done = subprocess.run(argv, check=False, cwd=workspace, env=env, capture_output=True, text=True,
                              timeout=STEP_TIMEOUT_S)
        output, ok = done.stdout + done.stderr, done.returncode == 0
        if not ok:
            output += f"\nexit status {done.returncode}"
    except subprocess.TimeoutExpired as expired:
        output, ok = f"{expired.stdout or ''}{expired.stderr or ''}\ntimed out after {STEP_TIMEOUT_S} s", False
    log.write_text(output, encoding="utf-8")
    return ok, ("" if ok else first_error_line(output))


def one_line(text: str, width: int = 150) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary folder, kept "
                        "only when a step failed)")
    parser.add_argument("--no-shared", action="store_true", help="as a newcomer without ../shared/data")
    parser.add_argument("--only", metavar="REGEX", help="run only the steps whose text matches (plus the demo)")
    parser.add_argument("--quick", action="store_true", help="only the steps that start no Spark (the demo's archive "
                        "stands in for make demo; about a minute): what `make test` runs")
    args = parser.parse_args(argv)

    base = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="readme-check-"))
    workspace, logs = base / "parascout", base / "logs"
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir(parents=True)
    logs.mkdir(exist_ok=True)
    copy_checkout(workspace)
    shared = None if args.no_shared else shared_folder()
    if shared and not (base / "shared").exists():
        (base / "shared").symlink_to(shared)
    envs = environments()
    print(f"README.md in a fresh copy at {workspace} ({'with' if shared else 'without'} ../shared/data)", flush=True)

    results = {"ok": 0, "failed": 0, "skipped": 0}
    demo_state, started = None, time.perf_counter()
    for index, step in enumerate(readme_steps(), start=1):
        planned = plan(step, bool(shared), args.quick)
        missing = args.quick and not planned.skip and missing_demo_input(planned.command, workspace)
        if missing:
            planned.skip = f"quick: {missing} is written by a step quick mode skips (the full run has it)"
        is_demo = planned.command.startswith("parascout demo")
        label = f"README:{step.line} " + (f"python snippet ({step.text.count(chr(10))} lines)"
                                          if step.kind == "python" else one_line(step.text, 110))
        if args.only and not is_demo and not re.search(args.only, step.text):
            continue
        if planned.skip:
            results["skipped"] += 1
            print(f"[skip]   {label}\n         {planned.skip}", flush=True)
            continue
        if planned.refuse:
            results["failed"] += 1
            print(f"[FAILED] {label}\n         {planned.refuse}", flush=True)
            continue
        began = time.perf_counter()
        ok, error = run_step(planned, workspace, logs, index, envs)
        seconds = time.perf_counter() - began
        state = demo_tables(workspace)
        if ok and demo_state is not None and not is_demo and state != demo_state:
            changed = sorted(k for k in {*state, *demo_state} if state.get(k) != demo_state.get(k))
            ok, error = False, f"changed the demo's tables: {', '.join(changed)}"
        if is_demo or demo_state is None:
            demo_state = state if state else None
        results["ok" if ok else "failed"] += 1
        print(f"[{'ok' if ok else 'FAILED'}]{' ' * (6 - len('ok' if ok else 'FAILED'))} {label} ({seconds:.0f} s)",
              flush=True)
        if planned.changes:
            print(f"         changed: {'; '.join(planned.changes)}", flush=True)
        if not ok:
            print(f"         {one_line(error)}\n         log: {logs / f'{index:02d}-line{step.line}.log'}", flush=True)
    total = time.perf_counter() - started
    print(f"\n{results['ok']} ok, {results['failed']} failed, {results['skipped']} skipped in {total / 60:.1f} min",
          flush=True)
    if not args.keep and not results["failed"]:
        shutil.rmtree(base)
    elif results["failed"]:
        print(f"logs and the copy are kept in {base}")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
