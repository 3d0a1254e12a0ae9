"""Pure per-record and per-batch functions of parascout, and their pandas_udf wrappers.

Nothing in this package creates a SparkSession: everything is testable with plain pandas.
"""
