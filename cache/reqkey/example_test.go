package reqkey_test

import (
	"fmt"

	"github.com/finrepro/finrepro/cache/reqkey"
)

// The request of the package comment: fields in any order, a number
// spelled 0.0 and an "e" with a combining acute accent (NFD).
func ExampleCanonical() {
	request := []byte(`{ "sample": 0, "endpoint": "chat/completions",
  "body": {"temperature": 0.0, "model": "gpt-4.1", "messages": [{"role": "user", "content": "caf\u0065\u0301"}]},
  "provider": "openai" }`)
	c, err := reqkey.Canonical(request)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", c)
	// Output:
	// finrepro-key/1
	// {"body":{"messages":[{"content":"café","role":"user"}],"model":"gpt-4.1","temperature":0},"endpoint":"chat/completions","provider":"openai","sample":0}
}

// Two spellings of one request have one key; another sample has another.
func ExampleOf() {
	a, _ := reqkey.Of([]byte(`{"provider":"p","endpoint":"e","body":{"n":1.0}}`))
	b, _ := reqkey.Of([]byte(`{"body":{"n":10e-1},"sample":0,"endpoint":"e","provider":"p"}`))
	c, _ := reqkey.Of([]byte(`{"provider":"p","endpoint":"e","body":{"n":1},"sample":1}`))
	fmt.Println(a == b, a == c)
	// Output: true false
}
