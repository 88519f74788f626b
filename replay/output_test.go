package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// refAPIError is apiError over a json.RawMessage.
func refAPIError(e json.RawMessage) *output {
	if len(e) == 0 || string(e) == "null" {
		return nil
	}
	return &output{APIError: snippet(e)}
}

// refParseOutput is the reference response reader, on encoding/json;
// parseOutput must agree with it.
func refParseOutput(kind Kind, body []byte) (*output, error) {
	var o output
	switch kind {
	case KindChat, KindSim:
		var r struct {
			Model   string `json:"model"`
			Choices []struct {
				Message struct {
					Content *string `json:"content"`
					Refusal *string `json:"refusal"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
			} `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		if err := refUnmarshalObject(body, &r); err != nil {
			return nil, err
		}
		if e := refAPIError(r.Error); e != nil {
			return e, nil
		}
		if len(r.Choices) == 0 {
			return nil, fmt.Errorf("%w: no choices", errMalformed)
		}
		c := r.Choices[0]
		o.Model, o.InputTokens, o.OutputTokens = r.Model, r.Usage.Prompt, r.Usage.Completion
		if c.Message.Content != nil {
			o.Text = *c.Message.Content
		}
		switch {
		case c.Message.Refusal != nil && *c.Message.Refusal != "":
			o.Refusal, o.RefusalReason = true, *c.Message.Refusal
		case c.FinishReason == "content_filter":
			o.Refusal, o.RefusalReason = true, "finish_reason content_filter"
		}
	case KindResponses:
		var r struct {
			Model  string `json:"model"`
			Status string `json:"status"`
			Output []struct {
				Type    string `json:"type"`
				Content []struct {
					Type    string `json:"type"`
					Text    string `json:"text"`
					Refusal string `json:"refusal"`
				} `json:"content"`
			} `json:"output"`
			Usage struct {
				Input  int `json:"input_tokens"`
				Output int `json:"output_tokens"`
			} `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		if err := refUnmarshalObject(body, &r); err != nil {
			return nil, err
		}
		if e := refAPIError(r.Error); e != nil {
			return e, nil
		}
		if r.Output == nil {
			return nil, fmt.Errorf("%w: no output", errMalformed)
		}
		o.Model, o.InputTokens, o.OutputTokens = r.Model, r.Usage.Input, r.Usage.Output
		var sb strings.Builder
		for _, it := range r.Output {
			if it.Type != "message" {
				continue
			}
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					sb.WriteString(c.Text)
				case "refusal":
					o.Refusal, o.RefusalReason = true, c.Refusal
				}
			}
		}
		o.Text = sb.String()
		if r.Status == "failed" {
			return nil, fmt.Errorf("%w: status failed", errMalformed)
		}
	case KindAnthropic:
		var r struct {
			Type    string `json:"type"`
			Model   string `json:"model"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StopReason string `json:"stop_reason"`
			Usage      struct {
				Input  int `json:"input_tokens"`
				Output int `json:"output_tokens"`
			} `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		if err := refUnmarshalObject(body, &r); err != nil {
			return nil, err
		}
		if e := refAPIError(r.Error); e != nil || r.Type == "error" {
			if e == nil {
				e = &output{APIError: snippet(body)}
			}
			return e, nil
		}
		if r.Type != "message" {
			return nil, fmt.Errorf("%w: type %q, want \"message\"", errMalformed, r.Type)
		}
		o.Model, o.InputTokens, o.OutputTokens = r.Model, r.Usage.Input, r.Usage.Output
		var sb strings.Builder
		for _, c := range r.Content {
			if c.Type == "text" {
				sb.WriteString(c.Text)
			}
		}
		o.Text = sb.String()
		if r.StopReason == "refusal" {
			o.Refusal, o.RefusalReason = true, "stop_reason refusal"
		}
	case KindGemini:
		var r struct {
			ModelVersion string `json:"modelVersion"`
			Candidates   []struct {
				Content struct {
					Parts []struct {
						Text    string `json:"text"`
						Thought bool   `json:"thought"`
					} `json:"parts"`
				} `json:"content"`
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
			PromptFeedback struct {
				BlockReason string `json:"blockReason"`
			} `json:"promptFeedback"`
			Usage struct {
				Prompt     int `json:"promptTokenCount"`
				Candidates int `json:"candidatesTokenCount"`
			} `json:"usageMetadata"`
			Error json.RawMessage `json:"error"`
		}
		if err := refUnmarshalObject(body, &r); err != nil {
			return nil, err
		}
		if e := refAPIError(r.Error); e != nil {
			return e, nil
		}
		o.Model, o.InputTokens, o.OutputTokens = r.ModelVersion, r.Usage.Prompt, r.Usage.Candidates
		if r.PromptFeedback.BlockReason != "" {
			o.Refusal, o.RefusalReason = true, "prompt blocked: "+r.PromptFeedback.BlockReason
			return &o, nil
		}
		if len(r.Candidates) == 0 {
			return nil, fmt.Errorf("%w: no candidates", errMalformed)
		}
		c := r.Candidates[0]
		var sb strings.Builder
		for _, p := range c.Content.Parts {
			if !p.Thought {
				sb.WriteString(p.Text)
			}
		}
		o.Text = sb.String()
		switch c.FinishReason {
		case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII":
			o.Refusal, o.RefusalReason = true, "finishReason "+c.FinishReason
		}
	default:
		return nil, fmt.Errorf("unknown provider kind %q", kind)
	}
	return &o, nil
}

// refUnmarshalObject is unmarshalObject on encoding/json.
func refUnmarshalObject(body []byte, v any) error {
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("%w: not a JSON object", errMalformed)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	return nil
}
func FuzzParseOutputMatchesReference(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","choices":[{"message":{"content":"hi <b>\u00e9\n"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
		`{"MODEL":"m","Choices":[{"message":{"content":null,"refusal":"no"}}],"error":null}`,
		`{"model":"a","model":"b","choices":[{"message":{"content":"x"}}],"choices":[{"message":{"content":"y"}}]}`,
		`{"error":{"message":"rate limited","type":"x"}}`,
		`{"model":"m","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"t"}]}],"usage":{"input_tokens":1,"output_tokens":2}}`,
		`{"type":"message","model":"c","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"stop_reason":"end_turn"}`,
		`{"modelVersion":"g","candidates":[{"content":{"parts":[{"text":"p","thought":true},{"text":"q"}]},"finishReason":"STOP"}]}`,
		"{\"model\":\"\xff\",\"choices\":[{\"message\":{\"content\":\"\\ud800x\"}}]}",
		`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1.5}}`,
		`{"choices":[]} trailing`,
		`[1]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, k := range allKinds {
			want, wantErr := refParseOutput(k, []byte(body))
			got, gotErr := parseOutput(k, []byte(body))
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("%s %q: error %v, reference %v", k, body, gotErr, wantErr)
			}
			if wantErr == nil && *got != *want {
				t.Fatalf("%s %q:\n got %+v\nwant %+v", k, body, *got, *want)
			}
		}
	})
}
