"""Command-line tools: `run-hlo`, `opt`, `aot`, `bench` and `demo`."""
