package replay_test

import (
	"fmt"

	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

func ExampleRequestOf() {
	p := results.Prompt{
		Provider: "anthropic", Model: "claude-sonnet-4-0",
		System: "You grade answers.", User: "Is 2+2=4? Answer yes or no.",
		Params: map[string]any{"temperature": 0},
	}
	req, err := replay.RequestOf(p)
	if err != nil {
		panic(err)
	}
	key, _ := reqkey.Of(req)
	fmt.Println(string(req))
	fmt.Println(len(key.String()))
	// Output:
	// {"provider":"anthropic","endpoint":"messages","body":{"max_tokens":4096,"messages":[{"content":"Is 2+2=4? Answer yes or no.","role":"user"}],"model":"claude-sonnet-4-0","system":"You grade answers.","temperature":0}}
	// 64
}
