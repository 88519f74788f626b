#!/bin/sh
# CPU time the clustered statistics add to reproduce of a bundle: runs
# reproduce ROUNDS times (default 6) with the default 10,000 resamples and
# with cluster_bootstrap=0 in all four benchmarks, interleaved, and prints
# user+system seconds of each run and the difference of the medians.
#   BUNDLE=dir sh bench/uncertainty.sh     (dir from: finrepro demo --scale full --out dir)
set -eu
: "${BUNDLE:?set BUNDLE to a bundle folder}"
ROUNDS=${ROUNDS:-6}
bin=$(mktemp -d)/finrepro
go build -o "$bin" ./cmd/finrepro
out=$(mktemp -d)
off="--set icbcbench.cluster_bootstrap=0 --set findeepresearch.cluster_bootstrap=0 --set findeepforecast.cluster_bootstrap=0 --set finresearchbench2.cluster_bootstrap=0"
log=$(mktemp)
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	/usr/bin/time -f "on %U %S" "$bin" reproduce "$BUNDLE" --out "$out/on" --quiet >/dev/null 2>>"$log"
	# shellcheck disable=SC2086 # $off is a list of flags
	/usr/bin/time -f "off %U %S" "$bin" reproduce "$BUNDLE" --out "$out/off" --quiet $off >/dev/null 2>>"$log"
	i=$((i + 1))
done
awk '{ t[$1] = t[$1] " " ($2 + $3) } END { print "with statistics:" t["on"]; print "without:        " t["off"] }' "$log"
for k in on off; do
	grep "^$k " "$log" | awk '{ print $2 + $3 }' | sort -n | awk -v k="$k" '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; print k, m }'
done | awk '{ m[$1] = $2 } END { printf "median CPU seconds added: %.2f\n", m["on"] - m["off"] }'
