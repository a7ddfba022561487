"""The Go/Python parity harness."""
