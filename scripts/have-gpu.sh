#!/usr/bin/env bash
# Exit 0 when an NVIDIA GPU is visible to this process.
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
