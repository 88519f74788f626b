package consensus_test

import (
	"fmt"

	"github.com/finrepro/finrepro/analysis/consensus"
)

func ExampleParseVerdicts() {
	answer := "q1-r1: yes\n- **[q1-r2]** No\nq1-r1: yes\n"
	labels, problems := consensus.ParseVerdicts(answer, []string{"q1-r1", "q1-r2", "q1-r3"})
	fmt.Println(labels)
	fmt.Println(problems)
	// Output:
	// [1 0 -1]
	// [skipped q1-r3]
}
