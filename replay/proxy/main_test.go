package proxy

import (
	"testing"

	"github.com/finrepro/finrepro/internal/trusttest"
)

func TestMain(m *testing.M) { trusttest.Main(m) }
