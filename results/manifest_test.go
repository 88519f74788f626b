package results

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseManifest checks that an accepted manifest lists valid,
// sorted, distinct paths and reads back the same once written again,
// and that a refused one is an *InputError naming the file.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"format":"finrepro-bundle/1","name":"x","benchmarks":["icbcbench"],"producer":"p","synthetic":true,"files":[{"path":"a/b","size":1,"sha256":"` + strings.Repeat("ab", 32) + `"}]}`))
	f.Add([]byte(`{"format":"finrepro-bundle/1","name":"x","files":[{"path":"../a","size":1,"sha256":""}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b, "manifest.json")
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.File != "manifest.json" {
				t.Fatalf("error %v does not name manifest.json", err)
			}
			return
		}
		for i, file := range m.Files {
			if !ValidPath(file.Path) || (i > 0 && m.Files[i-1].Path >= file.Path) {
				t.Fatalf("accepted bad path %q", file.Path)
			}
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := ParseManifest(again, "manifest.json")
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("manifest %s read back as %+v, %v; want %+v", again, m2, err, m)
		}
	})
}
