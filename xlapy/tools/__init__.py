"""Command-line tools: `run-hlo`, `demo` (and later `opt`, `aot`, `bench`)."""
