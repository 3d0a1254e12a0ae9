"""Verify: content similarity (tsim), STRAND's structure filter and the verification decision (verify-pairs)."""
