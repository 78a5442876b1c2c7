#!/usr/bin/env bash
# One call on a machine with an NVIDIA GPU: every GPU test, then the GPU benchmarks.
# (The GPU tests skip, and the benchmarks say why, where there is no GPU.)
set -uo pipefail
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || true
python -m pytest -q -p no:cacheprovider tests/gpu tests/backends/gpu 2>&1 | tail -25
python -m xlapy.cli bench --backend gpu
