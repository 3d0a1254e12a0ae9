"""A pywb CDX API server on 127.0.0.1, laid out like index.commoncrawl.org, for the tests.

Run as its own process (`python -m tests.support.pywb_cdx_server CONFIG CRAWL...`): importing pywb's
FrontEndApp monkey-patches the whole interpreter with gevent, which must not happen inside
pytest (Spark's py4j sockets and threads). It prints its port on the first line once it listens.

pywb's own /collinfo.json lists route names ({"fixed": [...], "dynamic": [...]}); CommonCrawl's
index server answers it with a list of crawls ({"id", "cdx-api", ...}), which cdx_toolkit reads
(and insists on 60 or more). This server answers it that way: the given crawls, then filler ids
up to 60, each with its `<base>/<id>-index` endpoint (the config sets `cdx_api_endpoint: -index`).
"""
from gevent.monkey import patch_all

patch_all()

import json
import sys

from gevent.pywsgi import WSGIServer
from pywb.apps.frontendapp import FrontEndApp

MIN_CRAWLS = 60


def collinfo(base_url: str, crawls: list[str]) -> bytes:
    ids = list(crawls) + [f"CC-MAIN-2000-{week:02d}" for week in range(1, MIN_CRAWLS - len(crawls) + 1)]
    return json.dumps([{"id": crawl, "name": crawl, "timegate": f"{base_url}/{crawl}/",
                        "cdx-api": f"{base_url}/{crawl}-index"} for crawl in ids]).encode()


def main(config: str, crawls: list[str]) -> None:
    app = FrontEndApp(config_file=config)
    listing: list[bytes] = []

    def with_collinfo(environ, start_response):
        if environ.get("PATH_INFO") == "/collinfo.json":
            start_response("200 OK", [("Content-Type", "application/json"),
                                      ("Content-Length", str(len(listing[0])))])
            return [listing[0]]
        return app(environ, start_response)

    server = WSGIServer(("127.0.0.1", 0), with_collinfo, log=None)
    server.start()
    listing.append(collinfo(f"http://127.0.0.1:{server.server_port}", crawls))
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
