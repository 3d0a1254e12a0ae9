"""The two errors every job raises: a configuration to fix before it starts, or a result not to trust; and how a
failed run's error reads in its report."""
from __future__ import annotations

import re

#: a frame of a Java stack trace in a Py4J or Spark error's text, and the "... 28 more" closing a cause's frames
_JAVA_FRAME = re.compile(r"^\s+(?:at [\w$.<>/]+\(|\.\.\. \d+ more$)")
MAX_ERROR_CHARS = 4000


class ConfigError(ValueError):
    """Bad configuration: raised at start, with a message that says what to fix."""


class JobFailed(RuntimeError):
    """The job ran but its result must not be trusted (e.g. too much bad input)."""


def error_summary(error: BaseException, max_chars: int = MAX_ERROR_CHARS) -> str:
    """`Type: message` of a failed run's error for its report: of a Spark or Py4J error, the Java exception and its
    causes without their stack frames (the driver's log keeps the whole trace), each line once; at most max_chars."""
    lines = [line.rstrip() for line in f"{type(error).__name__}: {error}".splitlines()
             if line.strip() and not _JAVA_FRAME.match(line)]
    summary = "\n".join(dict.fromkeys(lines))
    return summary if len(summary) <= max_chars else summary[:max_chars].rstrip() + " …"
