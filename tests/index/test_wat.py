"""udfs.index.wat on FastWARC: a file that is not a WARC is one counted row, and the rows match warcio's reading."""
from __future__ import annotations

import io

import pandas as pd

from parascout.udfs.index.wat import read_wat, read_wat_files
from testkit.warc import warcio_read_wat, wat_record_bytes


def test_fastwarc_rows_equal_the_warcio_reading():
    links = [{"path": "A@/href", "url": "/de/"}, {"path": "IMG@/src", "url": "/flags/de.png"}]
    data = b"".join(wat_record_bytes(f"http://a.com/{i}", links, title=f"Page {i}") for i in range(3))
    rows = list(read_wat(io.BytesIO(data)))
    assert [row["title"] for row in rows] == ["Page 0", "Page 1", "Page 2"]
    assert rows == warcio_read_wat(io.BytesIO(data))


def test_a_file_that_is_no_warc_is_one_bad_row(tmp_path):
    (tmp_path / "broken.wat.gz").write_bytes(b"not a WARC at all")
    frames = list(read_wat_files(iter([pd.DataFrame({"path": [str(tmp_path / "broken.wat.gz")]})])))
    rows = pd.concat(frames)
    assert rows["status"].tolist() == ["bad_wat_file"] and "Invalid WARC header" in rows["error"].iloc[0]
