#!/bin/sh
# Gufo against llama.cpp's Vulkan build on this machine's GPU, from the device kit alone (its own
# Node, Vulkan loader and libraries; nothing installed). Prints one JSON line per run: see run.mjs.
#   ./run.sh                          Llama-3.2-1B-shaped Q4_K_M and Q8_0 on the GPU
#   KIT_TYPES=all ./run.sh            every weight type's kernels (a file type each) on the GPU
#   KIT_SHAPE=tiny KIT_TYPES=Q4_K_M VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json ./run.sh
set -eu
kit=$(cd "$(dirname "$0")" && pwd)
# NVIDIA's Vulkan driver where the lent GPU machines have it, unless a driver is named already.
nvidia=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_ICD_FILENAMES:-}" ] && [ -f "$nvidia" ]; then
  VK_ICD_FILENAMES=$nvidia
  export VK_ICD_FILENAMES
fi
LD_LIBRARY_PATH="$kit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# llama.cpp skips CPU-type Vulkan devices (lavapipe) unless one is named; the first is the one driver chosen.
GGML_VK_VISIBLE_DEVICES=${GGML_VK_VISIBLE_DEVICES:-0}
export LD_LIBRARY_PATH GGML_VK_VISIBLE_DEVICES
exec "$kit/bin/node" "$kit/run.mjs" "$@"
