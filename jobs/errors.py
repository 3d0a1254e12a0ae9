"""The two errors every job raises: a configuration to fix before it starts, or a result not to trust."""


class ConfigError(ValueError):
    """Bad configuration: raised at start, with a message that says what to fix."""


class JobFailed(RuntimeError):
    """The job ran but its result must not be trusted (e.g. too much bad input)."""
