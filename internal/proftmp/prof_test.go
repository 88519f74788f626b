package proftmp

import (
	"context"
	"io"
	"os"
	"runtime/pprof"
	"testing"

	"github.com/finrepro/finrepro/cmd/finrepro/cli"
)

func TestProf(t *testing.T) {
	args := []string{"reproduce", os.Getenv("B"), "--out", os.Getenv("O"), "--quiet"}
	cli.Main(context.Background(), args, nil, io.Discard, os.Stderr)
	f, _ := os.Create(os.Getenv("P"))
	pprof.StartCPUProfile(f)
	cli.Main(context.Background(), args, nil, io.Discard, os.Stderr)
	pprof.StopCPUProfile()
}
