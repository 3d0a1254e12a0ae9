"""udfs.index.cdx_api: an unreachable CDX API is one clear error, not a library trace."""
import pytest

from parascout.udfs.index.cdx_api import CdxApiUnreachable, fetch_cdx_lines


@pytest.mark.parametrize("mirror", ["http://127.0.0.1:9/", "https://no-such-host.invalid/"])
def test_an_unreachable_cdx_api_says_so(mirror):
    with pytest.raises(CdxApiUnreachable, match="cannot reach the CDX API"):
        list(fetch_cdx_lines(["example.is/*"], ["CC-MAIN-2024-33"], mirror=mirror))
