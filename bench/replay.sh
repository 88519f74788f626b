#!/bin/sh
# Offline replay of 500 stored calls (replay.Client.Answer, which reads in
# parallel) against cache.Get of the same keys one at a time, paired in
# each round, on a plain store and on one Verify has passed (whose objects
# are not re-hashed, as a bundle's after its manifest check). Prints per
# round the wall and the CPU time (user and system, which a busy machine
# disturbs far less) of each case, then the minimum of each over the
# rounds. Usage: sh bench/replay.sh [ROUNDS]
set -eu
rounds=${1:-6}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/replay.test" ./replay/
i=1
while [ "$i" -le "$rounds" ]; do
	"$bin/replay.test" -test.run '^$' -test.bench 'BenchmarkReplay$' -test.benchtime 40x |
		awk '/^BenchmarkReplay\// { split($1, n, "/"); sub(/-[0-9]+$/, "", n[2]); w[n[2]] = $3 / 1e6; c[n[2]] = $5 / 1e6 }
		END { print w["get"], w["answer"], w["get-verified"], w["answer-verified"], c["get"], c["answer"], c["get-verified"], c["answer-verified"] }' >>"$bin/times"
	i=$((i + 1))
done
awk 'function line(h, a, b, c, d) { printf "%s: get %.1f ms, answer %.1f ms (%.2fx); verified store: get %.1f ms (%.2fx the plain get), answer %.1f ms (%.2fx the plain get)\n", h, a, b, b/a, c, c/a, d, d/a }
{ line("round " NR " wall", $1, $2, $3, $4); line("round " NR " CPU ", $5, $6, $7, $8)
	for (i = 1; i <= 8; i++) if (NR == 1 || $i < m[i]) m[i] = $i }
END { line("minimum wall", m[1], m[2], m[3], m[4]); line("minimum CPU ", m[5], m[6], m[7], m[8]) }' "$bin/times"
