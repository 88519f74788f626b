package forecast

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/finrepro/finrepro/results"
)

const goodTask = `{"id":"t1","week":1,"question":"Q?","t_generated":"2025-10-30T02:00:00Z","t_deadline":"2025-11-02T15:59:00Z","t_evaluated":"2025-11-09T00:00:00Z","kind":"non-recurrent","level":"corporate","market":"US","entity":"Co","truth":"Yes","resolved_at":"2025-11-10T00:00:00Z"}`

func TestReadTasksErrors(t *testing.T) {
	tests := []struct {
		name, old, new string
		line           int
		field          string
	}{
		{"deadline before generation", `"t_deadline":"2025-11-02T15:59:00Z"`, `"t_deadline":"2025-10-30T02:00:00Z"`, 2, "t_deadline"},
		{"evaluation before deadline", `"t_evaluated":"2025-11-09T00:00:00Z"`, `"t_evaluated":"2025-11-02T15:59:00Z"`, 2, "t_evaluated"},
		{"bad time", `"t_generated":"2025-10-30T02:00:00Z"`, `"t_generated":"30/10/2025"`, 2, "t_generated"},
		{"bad kind", `"kind":"non-recurrent"`, `"kind":"binary"`, 2, "kind"},
		{"bad level", `"level":"corporate"`, `"level":"firm"`, 2, "level"},
		{"bad market", `"market":"US"`, `"market":"usa"`, 2, "market"},
		{"bad truth", `"truth":"Yes"`, `"truth":"perhaps"`, 2, "truth"},
		{"truth without time", `,"resolved_at":"2025-11-10T00:00:00Z"`, ``, 2, "resolved_at"},
		{"no week", `"week":1,`, ``, 2, "week"},
		{"bad id", `"id":"t1"`, `"id":"t 1"`, 2, "id"},
		{"unknown field", `"week":1,`, `"week":1,"color":"red",`, 2, "color"},
		{"repeated id", `"id":"t1"`, `"id":"t0"`, 2, "id"},
		{"recurrent without tolerance", `"kind":"non-recurrent"`, `"kind":"recurrent","unit_type":"bushels"`, 2, "category"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			second := strings.Replace(goodTask, tc.old, tc.new, 1)
			first := strings.Replace(goodTask, `"id":"t1"`, `"id":"t0"`, 1)
			_, err := ReadTasksJSONL(strings.NewReader(first+"\n"+second+"\n"), "tasks.jsonl", DefaultTolerances())
			var ie *results.InputError
			if !errors.As(err, &ie) || ie.File != "tasks.jsonl" || ie.Line != tc.line || ie.Field != tc.field {
				t.Fatalf("error %v, want tasks.jsonl:%d: %s", err, tc.line, tc.field)
			}
		})
	}
}

// TestTasksCSV: the fixture's tasks written as CSV load to the same tasks.
func TestTasksCSV(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "fixture", "inputs", Name, TasksJSONLFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadTasksJSONL(strings.NewReader(string(b)), "tasks.jsonl", DefaultTolerances())
	if err != nil {
		t.Fatal(err)
	}
	csvb, err := os.ReadFile(filepath.Join("testdata", "tasks.csv"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadTasksCSV(strings.NewReader(string(csvb)), "tasks.csv", DefaultTolerances())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d tasks, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := *want[i], *got[i]
		w.file, w.line, g.file, g.line = "", 0, "", 0
		if !reflect.DeepEqual(w, g) {
			t.Errorf("task %d: CSV %+v, JSONL %+v", i, g, w)
		}
	}
	bad := strings.Replace(string(csvb), "2025-11-09T15:59:00Z", "2025-11-06T01:00:00Z", 1)
	_, err = ReadTasksCSV(strings.NewReader(bad), "tasks.csv", DefaultTolerances())
	var ie *results.InputError
	if !errors.As(err, &ie) || ie.Field != "t_deadline" || ie.Line < 2 {
		t.Fatalf("CSV with t_d <= t_g: error %v, want a tasks.csv line naming t_deadline", err)
	}
}

func TestLoadInputsErrors(t *testing.T) {
	good := func() fstest.MapFS {
		fs := fstest.MapFS{}
		for _, f := range []string{ConfigFile, TasksJSONLFile, LogFile} {
			b, err := os.ReadFile(filepath.Join("testdata", "fixture", "inputs", Name, f))
			if err != nil {
				t.Fatal(err)
			}
			fs[f] = &fstest.MapFile{Data: b}
		}
		return fs
	}
	if _, err := LoadInputs(good()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, old, new string
		wantFile, field      string
	}{
		{"log unknown system", LogFile, `"system":"B"`, `"system":"Z"`, LogFile, "system"},
		{"log unknown task", LogFile, `"task":"t2"`, `"task":"t9"`, LogFile, "task"},
		{"log bad time", LogFile, `2025-11-03T00:00:00Z`, `yesterday`, LogFile, "recorded_at"},
		{"config format", ConfigFile, `findeepforecast-config/1`, `v2`, ConfigFile, "format"},
		{"config time", ConfigFile, `2025-12-01T00:00:00Z`, `soon`, ConfigFile, "evaluated_at"},
		{"config repeated system", ConfigFile, `"name": "C"`, `"name": "A"`, ConfigFile, "systems[2].name"},
		{"config no model", ConfigFile, `"model": "model-b"`, `"model": ""`, ConfigFile, "systems[1].model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := good()
			fs[tc.file].Data = []byte(strings.Replace(string(fs[tc.file].Data), tc.old, tc.new, 1))
			_, err := LoadInputs(fs)
			var ie *results.InputError
			if !errors.As(err, &ie) || ie.File != tc.wantFile || ie.Field != tc.field {
				t.Fatalf("error %v, want %s: %s", err, tc.wantFile, tc.field)
			}
		})
	}
	fs := good()
	delete(fs, TasksJSONLFile)
	if _, err := LoadInputs(fs); err == nil || !strings.Contains(err.Error(), TasksCSVFile) {
		t.Fatalf("no tasks file: error %v, want one naming %s", err, TasksCSVFile)
	}
}

func TestReadTolerances(t *testing.T) {
	good := "# comment\nkind,key,applies_to,epsilon\nunit,million,million-scale financial metrics,0.05\ncategory,fx_rate,foreign exchange rates,0.001\n"
	tol, err := ReadTolerances(strings.NewReader(good), "tolerances.csv")
	if err != nil || len(tol) != 2 || tol[1].Epsilon != 0.001 || tol[1].Kind != ByCategory {
		t.Fatalf("ReadTolerances = %+v, %v", tol, err)
	}
	for _, tc := range []struct{ name, in, field string }{
		{"bad kind", "kind,key,applies_to,epsilon\nsize,x,y,0.1\n", "kind"},
		{"zero epsilon", "kind,key,applies_to,epsilon\nunit,x,y,0\n", "epsilon"},
		{"nan epsilon", "kind,key,applies_to,epsilon\nunit,x,y,NaN\n", "epsilon"},
		{"repeated", "kind,key,applies_to,epsilon\nunit,x,y,0.1\nunit,x,z,0.2\n", "key"},
		{"empty key", "kind,key,applies_to,epsilon\nunit,,y,0.1\n", "key"},
		{"header", "kind,applies_to,epsilon\nunit,y,0.1\n", ""},
	} {
		_, err := ReadTolerances(strings.NewReader(tc.in), "tolerances.csv")
		var ie *results.InputError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%s: error %v, want field %q", tc.name, err, tc.field)
		}
	}
}

func FuzzReadTasksJSONL(f *testing.F) {
	f.Add(goodTask + "\n")
	f.Add(strings.Replace(goodTask, `"kind":"non-recurrent"`, `"kind":"recurrent","unit_type":"million","truth":"(1,2) bn"`, 1))
	f.Add("{}\n\n{")
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ReadTasksJSONL(strings.NewReader(s), "tasks.jsonl", DefaultTolerances())
		if err == nil {
			for _, task := range ts {
				if !task.tg.Before(task.td) || !task.td.Before(task.te) {
					t.Fatalf("accepted task %s with unordered times", task.ID)
				}
			}
		}
	})
}

func FuzzReadTasksCSV(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "tasks.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add("id,week\n")
	f.Add("id,id\n1,2\n")
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ReadTasksCSV(strings.NewReader(s), "tasks.csv", DefaultTolerances())
		if err != nil {
			var ie *results.InputError
			if !errors.As(err, &ie) || ie.File != "tasks.csv" {
				t.Fatalf("error %v does not name tasks.csv", err)
			}
			return
		}
		for _, task := range ts {
			if !task.tg.Before(task.td) || !task.td.Before(task.te) {
				t.Fatalf("accepted task %s with unordered times", task.ID)
			}
		}
	})
}

func FuzzReadTolerances(f *testing.F) {
	f.Add("kind,key,applies_to,epsilon\nunit,million,x,0.05\n")
	f.Add("kind,key\n")
	f.Fuzz(func(t *testing.T, s string) {
		tol, err := ReadTolerances(strings.NewReader(s), "tolerances.csv")
		if err == nil {
			for _, tl := range tol {
				if !(tl.Epsilon > 0) {
					t.Fatalf("accepted epsilon %v", tl.Epsilon)
				}
			}
		}
	})
}

func FuzzReadConfig(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "fixture", "inputs", Name, ConfigFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add(`{"format":"findeepforecast-config/1","evaluated_at":"2025-01-01T00:00:00Z","systems":[{"name":"a"}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ReadConfig(strings.NewReader(s), ConfigFile)
		if err == nil && len(c.Systems) == 0 {
			t.Fatalf("accepted config without systems: %q", s)
		}
	})
}

// FuzzReadLog checks that an accepted log holds one entry a non-blank
// line, each of a known system and task, and that a rejected one is an
// *results.InputError naming the file and a line of it.
func FuzzReadLog(f *testing.F) {
	for _, s := range []string{
		`{"system":"A","task":"t1","recorded_at":"2025-10-30T19:00:00Z"}` + "\n",
		` { "system" : "A" , "task":"t1", "recorded_at":"x" } ` + "\n\n" + `{"task":"t1","system":"A","recorded_at":"x"}`,
		`{"System":"A","task":"t1","recorded_at":"x"}`, `{"system":"A\u00e9","task":"t\xff","recorded_at":"x"}`,
		`{"system":"A","task":"t1","recorded_at":"x"}}`, `{"system":"A","task":"t1","recorded_at":"x","more":1}`,
		`{"system":"A","task":"t1"}`, "{\"system\":\"A\ty\",\"task\":\"t1\",\"recorded_at\":\"x\"}", `{"system":1}`, "[", "",
		`{"system":"A","task":"t1","recorded_at":"2025-10-31T00:00:00Z"}` + "\n" + `{"system":"A","task":"t1","recorded_at":"2025-10-31T00:00:00Z"}`,
		"{\"system\":\"A\"}\n{",
	} {
		f.Add(s)
	}
	systems, tasks := map[string]int{"A": 0, "B": 1}, map[string]int{"t1": 0, "t2": 1}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := readLog(strings.NewReader(s), systems, tasks)
		if err != nil {
			var ie *results.InputError
			if !errors.As(err, &ie) || ie.File != LogFile || ie.Line < 0 || ie.Line > strings.Count(s, "\n")+2 {
				t.Fatalf("readLog(%q) error %#v: not an InputError naming the log and a line", s, err)
			}
			return
		}
		n := 0
		for l := range strings.Lines(s) {
			if len(bytes.TrimSpace([]byte(l))) > 0 {
				n++
			}
		}
		got := 0
		for i := range len(systems) * len(tasks) {
			if _, ok := out.at(i); ok {
				got++
			}
		}
		if got != n {
			t.Fatalf("readLog(%q): %d entries from %d lines", s, got, n)
		}
	})
}
