"""Build an archive of real documentation sites no setting was chosen on, from Debian's documentation packages
(testkit.doc_archive: the sites, the WARC and CDX files, the truth by the real-sites archives' rule).

    apt-get download debian-handbook debian-reference-{en,fr,de,es} && for f in *.deb; do dpkg-deb -x $f pkg; done
    python benchmarks/build_doc_archive.py --packages pkg --out out/doc-archive
    python benchmarks/eval_real_sites.py --archive out/doc-archive --grid min_lang_share=0.5 --out out/doc-eval

(--packages / where the packages are installed.) eval_real_sites.py then runs the README's walk-through on it with
the defaults the real-sites archives chose and scores every site.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testkit.doc_archive import L2S, build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=Path, default=Path("/"),
                        help="the root the packages' files are under (/ when installed; dpkg-deb -x's folder)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--leave-out", type=float, default=0.25, help="share of each translation left out")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--l2", default=",".join(L2S), help="languages paired with English (the Handbook also has "
                                                           "it, pt and ru)")
    args = parser.parse_args(argv)
    stats = build(args.packages, args.out, args.leave_out, args.seed, tuple(args.l2.split(",")))
    print(json.dumps({key: stats[key] for key in ("pages", "pages_by_host_lang", "pairs")}, indent=1))
    return 0 if stats["pages"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
