#!/usr/bin/env bash
# Draws docs/pipeline.svg (the picture in docs/design.md) from
# docs/pipeline.dot with Graphviz. Not part of the build or CI: run it after
# editing the .dot file and commit both.
#
#   scripts/render-pipeline.sh          # needs `dot` (Debian: apt-get install graphviz)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v dot > /dev/null; then
  echo "error: Graphviz 'dot' not found (Debian: apt-get install --no-install-recommends graphviz)" >&2
  exit 1
fi
dot -Tsvg docs/pipeline.dot -o docs/pipeline.svg
echo "wrote docs/pipeline.svg"
