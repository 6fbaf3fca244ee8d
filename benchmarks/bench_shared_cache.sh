#!/usr/bin/env bash
# The shared result cache at the quick scale: two clones of this repository and one cache
# directory (docs/design.md, "Shared result cache").  The first clone computes the targets
# with `snakemake --cache` and fills the cache; the second, run the same way, reuses every
# job of the cached rules.  Prints the wall and CPU time (user + system of Snakemake and
# its jobs) of each clone's run, the jobs each ran, and `aimrepro diff` of the two trees.
#   bash benchmarks/bench_shared_cache.sh [targets...]
# Defaults to the targets of tests/workflow/test_cache_workflow.py at the quick scale.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${VENV:-$repo/.venv}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(figures/quick/paper1_fig2.pdf figures/quick/paper2_fig2.pdf figures/quick/paper2_fig3.pdf)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/cache"
for clone in one two; do
    git clone -q "$repo" "$work/$clone"
done
for clone in one two; do
    cd "$work/$clone"
    SNAKEMAKE_OUTPUT_CACHE="$work/cache" /usr/bin/time -f "%e %U %S" -o time.txt \
        "$venv/bin/snakemake" --cores 2 "${targets[@]}" --cache > snakemake.out 2>&1 \
        || { tail -30 snakemake.out; exit 1; }
    read -r wall user system < time.txt
    jobs=$(grep -c '^Finished job' snakemake.out || true)
    # a stored output is moved into the cache, then linked back like a reused one
    stored=$(grep -c '^Moving output file .* to cache\.' snakemake.out || true)
    linked=$(grep -c 'output file .* from cache\.' snakemake.out || true)
    printf 'clone %s: %.1f s wall, %.1f s CPU, %s jobs finished, %s files stored in the cache, %s reused from it\n' \
        "$clone" "$wall" "$(echo "$user + $system" | bc)" "$jobs" "$stored" "$((linked - stored))"
done
"$venv/bin/aimrepro" diff "$work/one" "$work/two" | sed -n 3p
