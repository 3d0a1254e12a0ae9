"""The one redaction of credentials: reports, logs, error strings in tables, anything written from arguments.

`redact(value)` copies a value (dicts and lists at any depth, strings) with credentials replaced by `***`:
values under secret-looking keys, the userinfo of URLs (`s3://KEY:SECRET@bucket/...`) and the same
`KEY:SECRET@host` without a scheme, as error messages quote bucket names. `url_credentials(text)` finds
userinfo in a URL argument, which jobs refuse at start. `install_log_filter()` redacts every log record.
"""
from __future__ import annotations

import logging
import re
from typing import Any

#: keys whose values are credentials, at any depth of the arguments and the --conf YAML (its `spark:` section too)
SECRET_KEY = re.compile(r"secret|password|passwd|token|credential|authorization|apikey"
                        r"|(?:access|account|private|api|client|sas|signing|encryption|master)[._-]?key",
                        re.IGNORECASE)
#: the user:password@ (or token@) part of a URL
URL_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#@\s]+@")
#: user:password@host without a scheme (a bucket name quoted in an error message)
BARE_USERINFO = re.compile(r"(?<![\w/:@.%+-])(?!mailto:)[^\s/?#@:\"'<>()\[\]]+:[^\s/?#@\"'<>()\[\]]+@(?=[A-Za-z0-9])")
REDACTED = "***"


def redact(value: Any) -> Any:
    """A copy of a value with credentials replaced: values of secret-looking keys and userinfo in URLs."""
    if isinstance(value, dict):
        return {key: REDACTED if SECRET_KEY.search(str(key)) and item is not None else redact(item)
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return BARE_USERINFO.sub(f"{REDACTED}@", URL_USERINFO.sub(rf"\g<scheme>{REDACTED}@", value))
    return value


def url_credentials(text: str) -> bool:
    """Whether a string holds a URL with userinfo (credentials or a token)."""
    return bool(URL_USERINFO.search(text) or BARE_USERINFO.search(text))


class RedactingFilter(logging.Filter):
    """Redacts a log record's formatted message (its arguments included) before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install_log_filter(logger: logging.Logger | None = None) -> None:
    """Put the redacting filter on every handler of `logger` (default: the root logger), once."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(existing, RedactingFilter) for existing in handler.filters):
            handler.addFilter(RedactingFilter())
