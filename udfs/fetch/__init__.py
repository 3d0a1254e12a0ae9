"""Fetch: WARC records by offset, HTML to main text and paragraphs, link cues, per-site near-duplicates (fetch-docs)."""
