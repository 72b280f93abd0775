#!/usr/bin/env bash
# docs/configuration.md must equal what the program generates from its key table.
mm="$1"; doc="$2"
ref=$(mktemp) || exit 1
trap 'rm -f "$ref"' EXIT
"$mm" --config-reference >"$ref"
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "$mm --config-reference failed (exit $rc)"
  exit 1
fi
if [ ! -s "$doc" ] || [ ! -s "$ref" ]; then
  echo "empty: $doc or the generated reference"
  exit 1
fi
if ! diff -u "$doc" "$ref"; then
  echo "docs/configuration.md is out of date: regenerate with build/minimodel --config-reference > docs/configuration.md"
  exit 1
fi
echo "ok"
