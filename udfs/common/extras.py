"""Optional dependencies: which `pip install 'parascout[EXTRA]'` brings a missing module.

The core wheel reads indexes, WARC/WAT records and HTML; the heavy parts are extras
(setup.py EXTRAS): `models` (torch, transformers, tokenizers: the URL models),
`sample` (wordfreq, babel: the sample archive's word lists), `plots` (matplotlib),
`cdx-api` (cdx-toolkit). A job that needs a missing one says which extra to install.
"""
from __future__ import annotations

#: top-level module -> the extra that installs it
EXTRA_OF_MODULE = {
    "torch": "models",
    "transformers": "models",
    "tokenizers": "models",
    "wordfreq": "sample",
    "babel": "sample",
    "matplotlib": "plots",
    "cdx_toolkit": "cdx-api",
}


def missing_extra(error: ModuleNotFoundError) -> str | None:
    """The extra that provides the module `error` names, or None when it is not an optional dependency."""
    module = (error.name or "").split(".")[0]
    return EXTRA_OF_MODULE.get(module)


def missing_extra_message(error: ModuleNotFoundError) -> str:
    """One line that says what to install: the extra when the module is optional, else the module itself."""
    extra = missing_extra(error)
    if extra:
        return (f"this needs the optional dependency {error.name!r}: "
                f"pip install 'parascout[{extra}]' (or 'parascout[all]')")
    return f"missing module {error.name!r}: reinstall parascout ('pip install parascout') or install {error.name}"
