#!/bin/sh
# How reproduce costs grow with the bundle: build the full-scale demo at
# several factors ("finrepro demo --scale full --factor N") and time
# "finrepro reproduce" on each, with and without the sensitivity sweeps,
# with peak memory, exchanges and the time per 1,000 exchanges. Ratios
# are against the first factor, measured in the same run. Like
# bench/reproduce.sh it times reruns into one output folder, after an
# untimed first run that creates it. Not run by CI.
#
#   sh bench/scaling.sh                 # factors 1 2 4
#   FACTORS="1 2" sh bench/scaling.sh   # other factors
set -eu
FACTORS=${FACTORS:-1 2 4}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go build -o "$W/finrepro" ./cmd/finrepro
: > "$W/rows"
for f in $FACTORS; do
	B="$W/full-x$f"
	/usr/bin/time -f "%e %M" -o "$W/t" "$W/finrepro" demo --out "$B" --scale full --factor "$f" > /dev/null 2> "$W/demo.err" || { cat "$W/demo.err"; exit 1; }
	build=$(cut -d' ' -f1 "$W/t")
	ex=$("$W/finrepro" cache stats --dir "$B/cache" --json | sed -n 's/.*"exchanges": *\([0-9]*\).*/\1/p' | head -n 1)
	"$W/finrepro" reproduce "$B" --out "$W/out" --quiet > /dev/null 2>&1
	/usr/bin/time -f "%e %M" -o "$W/t" "$W/finrepro" reproduce "$B" --out "$W/out" --quiet > /dev/null 2>&1
	p=$(cat "$W/t")
	/usr/bin/time -f "%e %M" -o "$W/t" "$W/finrepro" reproduce "$B" --out "$W/out" --quiet --no-sweep > /dev/null 2>&1
	n=$(cat "$W/t")
	echo "$f $build $(du -sm "$B" | cut -f1) $ex $p $n" >> "$W/rows"
	echo "factor $f done: build $build s, $ex exchanges" >&2
	rm -rf "$B" "$W/out"
done
awk 'BEGIN {
	printf "%-6s %8s %7s %9s %12s %12s %9s %9s %10s %8s\n", "factor", "build s", "MB", "exchanges", "reproduce s", "no-sweep s", "peak MB", "s/1k ex", "nosw/1k", "time/x1"
}
NR == 1 { t1 = $5 }
{
	printf "%-6s %8.1f %7d %9d %12.2f %12.2f %9d %9.3f %10.3f %8.2f\n", "x" $1, $2, $3, $4, $5, $7, ($6 > $8 ? $6 : $8) / 1024, 1000 * $5 / $4, 1000 * $7 / $4, $5 / t1
}' "$W/rows"
