"""The Python port of the Go recall tools (placeholder until the port lands)."""
