"""Index scan: CDX lines and the columnar index, WAT links, URL-declared languages, indexing one's own WARCs, site discovery (scan-cdx, index-warcs, discover-sites)."""
