package forecast_test

import (
	"fmt"

	"github.com/finrepro/finrepro/analysis/forecast"
)

func ExampleParseNumber() {
	for _, s := range []string{"1,234.5 million", "(12.5)", "3.2亿元", "５.２５％", "USD 1.2 billion"} {
		n, err := forecast.ParseNumber(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s -> %g in millions (percent %v)\n", s, n.In(1e6), n.Percent)
	}
	// Output:
	// 1,234.5 million -> 1234.5 in millions (percent false)
	// (12.5) -> -12.5 in millions (percent false)
	// 3.2亿元 -> 320 in millions (percent false)
	// ５.２５％ -> 5.25 in millions (percent true)
	// USD 1.2 billion -> 1200 in millions (percent false)
}

func ExampleParseReply() {
	f, err := forecast.ParseReply("Revenue should grow.\nFinal answer: Yes\nEvidence:\n- https://example.com/a (published 2025-11-01T08:00:00Z)\n")
	fmt.Println(f.Answer, len(f.Evidence), f.Evidence[0].Time, err)
	// Output: Yes 1 2025-11-01 08:00:00 +0000 UTC <nil>
}
