#!/usr/bin/env bash
# docs/configuration.md must equal what the program generates from its key table.
mm="$1"; doc="$2"
if ! diff -u "$doc" <("$mm" --config-reference); then
  echo "docs/configuration.md is out of date: regenerate with build/minimodel --config-reference > docs/configuration.md"
  exit 1
fi
echo "ok"
