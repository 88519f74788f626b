#!/bin/sh
# How reproduce costs grow with the bundle: build the full-scale demo at
# several factors ("finrepro demo --scale full --factor N") and time
# "finrepro reproduce" on each, with and without the sensitivity sweeps,
# with peak memory (of the demo build too), exchanges and the time per
# 1,000 exchanges. Ratios are against the first factor, measured in the
# same run. Like bench/reproduce.sh it times reruns into one output
# folder, after an untimed first run that creates it. With BASE=binary,
# that finrepro's reproduce runs on the same bundles too, alternating
# with this one, for a before/after in the same run. Not run by CI.
#
#   sh bench/scaling.sh                    # factors 1 2 4
#   FACTORS="1 2 4 8" sh bench/scaling.sh  # up to 8x: about 25 min on 2 cores, 7 GB free disk
#   BASE=/path/to/finrepro-old sh bench/scaling.sh
set -eu
FACTORS=${FACTORS:-1 2 4}
BASE=${BASE:-}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go build -o "$W/finrepro" ./cmd/finrepro
: > "$W/rows"
: > "$W/base"
for f in $FACTORS; do
	B="$W/full-x$f"
	/usr/bin/time -f "%e %M" -o "$W/t" "$W/finrepro" demo --out "$B" --scale full --factor "$f" > /dev/null 2> "$W/demo.err" || { cat "$W/demo.err"; exit 1; }
	build=$(cat "$W/t")
	ex=$("$W/finrepro" cache stats --dir "$B/cache" --json | sed -n 's/.*"exchanges": *\([0-9]*\).*/\1/p' | head -n 1)
	"$W/finrepro" reproduce "$B" --out "$W/out" --quiet > /dev/null 2>&1
	if [ -n "$BASE" ]; then
		# a BASE that fails (older binaries did at 4x) is reported, not fatal
		if "$BASE" reproduce "$B" --out "$W/base-out" --quiet > /dev/null 2>&1 &&
			/usr/bin/time -f "%e %M" -o "$W/t" "$BASE" reproduce "$B" --out "$W/base-out" --quiet > /dev/null 2>&1; then
			echo "$f $(cat "$W/t")" >> "$W/base"
			cmp -s "$W/out/SHA256SUMS" "$W/base-out/SHA256SUMS" || echo "factor $f: SHA256SUMS differ from BASE's" >&2
		else
			echo "factor $f: BASE failed" >&2
		fi
	fi
	/usr/bin/time -f "%e %M" -o "$W/t" "$W/finrepro" reproduce "$B" --out "$W/out" --quiet > /dev/null 2>&1
	p=$(cat "$W/t")
	/usr/bin/time -f "%e %M" -o "$W/t" "$W/finrepro" reproduce "$B" --out "$W/out" --quiet --no-sweep > /dev/null 2>&1
	n=$(cat "$W/t")
	echo "$f $build $(du -sm "$B" | cut -f1) $ex $p $n" >> "$W/rows"
	echo "factor $f done: build $(echo "$build" | cut -d' ' -f1) s, $ex exchanges" >&2
	rm -rf "$B" "$W/out" "$W/base-out"
done
awk 'BEGIN {
	printf "%-6s %8s %9s %7s %9s %12s %12s %9s %9s %10s %8s %8s\n", "factor", "build s", "build MB", "MB", "exchanges", "reproduce s", "no-sweep s", "peak MB", "s/1k ex", "nosw/1k", "time/x1", "peak/x1"
}
NR == 1 { t1 = $6; m1 = ($7 > $9 ? $7 : $9) }
{
	m = ($7 > $9 ? $7 : $9)
	printf "%-6s %8.1f %9d %7d %9d %12.2f %12.2f %9d %9.3f %10.3f %8.2f %8.2f\n", "x" $1, $2, $3 / 1024, $4, $5, $6, $8, m / 1024, 1000 * $6 / $5, 1000 * $8 / $5, $6 / t1, m / m1
}' "$W/rows"
if [ -n "$BASE" ]; then
	echo "BASE ($BASE), reproduce with sweeps:"
	awk '{ printf "x%-5s %8.2f s %8d MB\n", $1, $2, $3 / 1024 }' "$W/base"
fi
