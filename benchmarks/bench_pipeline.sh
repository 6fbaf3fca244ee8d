#!/usr/bin/env bash
# Wall time of the quick-scale pipeline from a clean results/ on N cores (default 2),
# in a temporary copy of the repository so the working tree is untouched.
#   bash benchmarks/bench_pipeline.sh [cores] [extra snakemake arguments]
set -euo pipefail
cores=${1:-2}
shift || true
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
snakemake=${SNAKEMAKE:-$(command -v snakemake)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$repo"/{Snakefile,config.yaml,workflow,profiles,src} "$work"/
cd "$work"
start=$(date +%s.%N)
"$snakemake" --cores "$cores" --quiet "$@" > snakemake.out 2>&1 || { tail -30 snakemake.out; exit 1; }
end=$(date +%s.%N)
jobs=$(find results figures -name '*.json' | wc -l)
printf 'quick-scale pipeline on %s cores: %.1f s wall, %s results and figures with sidecars\n' \
    "$cores" "$(echo "$end - $start" | bc)" "$jobs"
