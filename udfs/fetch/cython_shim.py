"""What udfs.fetch.page_walk reads of Cython's `cython` module when it runs as plain Python and Cython (a build tool,
fetched by `make walk`, not a dependency) is not installed."""

compiled = False
