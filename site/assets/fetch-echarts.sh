#!/bin/sh
# fetch-echarts.sh re-fetches the ECharts script the site embeds from the
# npm registry package echarts, checks its SHA-256 and copies it with its
# licence files next to this script. Run it from any directory:
#
#	sh site/assets/fetch-echarts.sh
#
# The version is the one go-echarts v2.6.7 targets; change VERSION and SUM
# together.
set -eu

VERSION=5.4.3
SUM=1156429a16a38cb8604dcc6518c19406d4226142d908f8edd2e3531443c54d19

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "echarts@$VERSION" >/dev/null && tar xzf "echarts-$VERSION.tgz")

got=$(sha256sum "$tmp/package/dist/echarts.min.js" | cut -d' ' -f1)
if [ "$got" != "$SUM" ]; then
	echo "fetch-echarts: echarts.min.js has SHA-256 $got, want $SUM" >&2
	exit 1
fi

cp "$tmp/package/dist/echarts.min.js" "$here/echarts.min.js"
cp "$tmp/package/LICENSE" "$here/echarts.LICENSE"
cp "$tmp/package/NOTICE" "$here/echarts.NOTICE"
cp "$tmp/package/licenses/LICENSE-d3" "$here/echarts.LICENSE-d3"
echo "fetch-echarts: echarts $VERSION ok"
