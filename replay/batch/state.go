package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/internal/regular"
)

// StateVersion is the version of state.json this package writes and reads.
const StateVersion = 1

// maxState caps the size of state.json read back: a million keys of 67
// bytes each, with room for statuses and failures.
const maxState = 256 << 20

// A State is what Submit, Status, Collect and Cancel know of the batches
// of a folder.
type State struct {
	Version int `json:"version"`
	// Bundle, when set, is the bundle folder whose requests were
	// submitted: collect copies the stored results into its cache.
	Bundle  string   `json:"bundle,omitempty"`
	Batches []*Batch `json:"batches"`
}

// A Batch is one provider batch and its requests.
type Batch struct {
	Local      string    `json:"local"`
	Provider   string    `json:"provider"`
	API        API       `json:"api"`
	BaseURL    string    `json:"base_url"`
	ID         string    `json:"id"`
	InputFile  string    `json:"input_file,omitempty"`
	Status     string    `json:"status"`
	Counts     Counts    `json:"counts"`
	OutputFile string    `json:"output_file,omitempty"`
	ErrorFile  string    `json:"error_file,omitempty"`
	Collected  bool      `json:"collected"`
	Keys       []string  `json:"keys"`
	Failures   []Failure `json:"failures,omitempty"`
}

// Counts are a batch's request counts as its provider reports them:
// OpenAI's total, completed and failed, Anthropic's processing,
// succeeded, errored, canceled and expired.
type Counts struct {
	Total      int `json:"total,omitempty"`
	Processing int `json:"processing,omitempty"`
	Succeeded  int `json:"succeeded,omitempty"`
	Errored    int `json:"errored,omitempty"`
	Canceled   int `json:"canceled,omitempty"`
	Expired    int `json:"expired,omitempty"`
}

// A Failure is a request of a collected batch that was not stored.
type Failure struct {
	Key   string `json:"key"`
	Cause string `json:"cause"`
	Msg   string `json:"msg,omitempty"`
}

// StatusSubmitting is the status of a batch whose creation had begun but
// was not confirmed by the provider when the state was last written.
const StatusSubmitting = "submitting"

var (
	localName = regexp.MustCompile(`^[0-9]{4,9}$`)
	keyHex    = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ParseState reads a state.json, naming file in errors. It accepts only
// version 1 with known fields, local names of four to nine digits, hex
// keys, each key in at most one batch that is not collected (a collected
// batch's failures are submitted again in a new one), and known APIs.
func ParseState(r io.Reader, file string) (*State, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxState+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(b) > maxState {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, maxState)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: data after the state object", file)
	}
	if s.Version != StateVersion {
		return nil, fmt.Errorf("%s: version: got %d, want %d", file, s.Version, StateVersion)
	}
	locals := map[string]bool{}
	open := map[string]string{} // key -> the uncollected batch holding it
	for i, bt := range s.Batches {
		at := func(field, format string, args ...any) error {
			return fmt.Errorf("%s: batches[%d].%s: %s", file, i, field, fmt.Sprintf(format, args...))
		}
		switch {
		case bt == nil:
			return nil, at("", "null")
		case !localName.MatchString(bt.Local):
			return nil, at("local", "%q is not four to nine digits", bt.Local)
		case locals[bt.Local]:
			return nil, at("local", "%q repeated", bt.Local)
		case bt.API != OpenAI && bt.API != Anthropic:
			return nil, at("api", "%q, want openai or anthropic", bt.API)
		case bt.Provider == "":
			return nil, at("provider", "empty")
		case bt.Status == "":
			return nil, at("status", "empty")
		case bt.ID == "" && bt.Status != StatusSubmitting:
			return nil, at("id", "empty for status %q", bt.Status)
		case len(bt.Keys) == 0:
			return nil, at("keys", "empty")
		}
		locals[bt.Local] = true
		mine := make(map[string]bool, len(bt.Keys))
		for k, key := range bt.Keys {
			if !keyHex.MatchString(key) {
				return nil, at(fmt.Sprintf("keys[%d]", k), "%q is not a 64-digit lower-case hex key", key)
			}
			if mine[key] {
				return nil, at(fmt.Sprintf("keys[%d]", k), "key %.8s repeated", key)
			}
			mine[key] = true
			if bt.Collected {
				continue
			}
			if prev, dup := open[key]; dup {
				return nil, at(fmt.Sprintf("keys[%d]", k), "key %.8s is also in open batch %s", key, prev)
			}
			open[key] = bt.Local
		}
		for k, f := range bt.Failures {
			if !mine[f.Key] {
				return nil, at(fmt.Sprintf("failures[%d].key", k), "%.8s is not a key of this batch", f.Key)
			}
		}
	}
	return &s, nil
}

// Format writes s as state.json: indented, batches in local-name order.
func (s *State) Format(w io.Writer) error {
	slices.SortFunc(s.Batches, func(a, b *Batch) int { return cmpLocal(a.Local, b.Local) })
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// cmpLocal orders local names by number.
func cmpLocal(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// stateDir is the state folder inside the folder given to the commands.
const stateDir = "batch"

func statePath(dir string) string   { return filepath.Join(dir, stateDir, "state.json") }
func requestsDir(dir string) string { return filepath.Join(dir, stateDir, "requests") }
func requestsPath(dir, local string) string {
	return filepath.Join(requestsDir(dir), local+".jsonl")
}

// LoadState reads dir's state; a folder without one has an empty state.
func LoadState(dir string) (*State, error) {
	p := statePath(dir)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &State{Version: StateVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	defer f.Close()
	s, err := ParseState(f, p)
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	return s, nil
}

// save writes s to dir atomically.
func (s *State) save(dir string) error {
	var b bytes.Buffer
	if err := s.Format(&b); err != nil {
		return fmt.Errorf("batch: state: %w", err)
	}
	return writeFileAtomic(statePath(dir), b.Bytes())
}

// writeFileAtomic writes b to path durably (regular.WriteFile, through
// path's own folder): a crash leaves either the old file or the new one.
func writeFileAtomic(path string, b []byte) error {
	d := filepath.Dir(path)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	if err := regular.WriteFile(d, path, b); err != nil {
		return fmt.Errorf("batch: write %s: %w", path, err)
	}
	return nil
}

// covered returns the keys no new batch may take: those of batches not
// yet collected.
func (s *State) covered() map[cache.Key]bool {
	out := map[cache.Key]bool{}
	for _, b := range s.Batches {
		if b.Collected {
			continue
		}
		for _, k := range b.Keys {
			key, err := reqkey.Parse(k)
			if err == nil { // ParseState checked every key
				out[key] = true
			}
		}
	}
	return out
}

// nextLocal returns the next free local name.
func (s *State) nextLocal() string {
	n := 0
	for _, b := range s.Batches {
		var v int
		fmt.Sscan(b.Local, &v) // ParseState checked the digits
		n = max(n, v)
	}
	return fmt.Sprintf("%04d", n+1)
}
