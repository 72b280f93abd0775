#!/usr/bin/env bash
# scripts/device-run on a machine whose driver is older than the bundle's
# CUDA: it stops at once, exit 1, naming both versions (tests/expect.sh
# checks the status and the words), before it links or unpacks anything.
# usage: device_run_old_driver.sh DEVICE-RUN
set -u
d="$(mktemp -d)"
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/scripts" "$d/.device" "$d/bin"
cp "$1" "$d/scripts/device-run"
printf 'commit 0000000\nrepository %s/elsewhere\nbuild build-device\nopenmpi_prefix /usr\ncuda 13.0.88\n' \
  "$d" >"$d/.device/MANIFEST"
cat >"$d/bin/nvidia-smi" <<'SMI'
#!/bin/sh
case "$1" in
  --query-gpu*) echo "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB" ;;
  *) echo "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4     |" ;;
esac
SMI
chmod +x "$d/bin/nvidia-smi"
PATH="$d/bin:$PATH" bash "$d/scripts/device-run" --only tests
rc=$?
# nothing done: no link at the build's path, nothing unpacked
[ -e "$d/elsewhere" ] && { echo "device_run_old_driver: device-run linked the repository" >&2; exit 3; }
exit "$rc"
