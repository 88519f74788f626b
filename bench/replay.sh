#!/bin/sh
# Offline replay against cache.Get of the same keys, paired in each round:
# prints, per round, the time of each case and the ratios answer/get, on a
# plain store and on one Verify has passed (whose objects are not
# re-hashed, as a bundle's after its manifest check); then the minimum of
# each case over the rounds, which a busy machine disturbs least.
# Usage: sh bench/replay.sh [ROUNDS]
set -eu
rounds=${1:-6}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/replay.test" ./replay/
i=1
while [ "$i" -le "$rounds" ]; do
	"$bin/replay.test" -test.run '^$' -test.bench 'BenchmarkReplay$' -test.benchtime 40x |
		awk '/^BenchmarkReplay\// { split($1, n, "/"); sub(/-[0-9]+$/, "", n[2]); t[n[2]] = $3 / 1e6 }
		END { print t["get"], t["answer"], t["get-verified"], t["answer-verified"] }' >>"$bin/times"
	i=$((i + 1))
done
awk '{ printf "round %d: get %.1f ms, answer %.1f ms (%.2fx); verified store: get %.1f ms (%.2fx the plain get), answer %.1f ms (%.2fx its get)\n", NR, $1, $2, $2/$1, $3, $3/$1, $4, $4/$3
	for (i = 1; i <= 4; i++) if (NR == 1 || $i < m[i]) m[i] = $i }
END { printf "minimum over %d rounds: get %.1f ms, answer %.1f ms (%.2fx); verified store: get %.1f ms, answer %.1f ms (%.2fx)\n", NR, m[1], m[2], m[2]/m[1], m[3], m[4], m[4]/m[3] }' "$bin/times"
