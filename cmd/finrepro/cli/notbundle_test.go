package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotABundle: every command that takes a bundle, given a path that
// is none, says that the path is not a bundle and why, and exits with
// the same code for each kind of path: ExitFailure where nothing is,
// ExitIntegrity for anything else.
func TestNotABundle(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]struct {
		path, reason string
		code         int
	}{
		"missing":     {filepath.Join(dir, "nosuch"), "it does not exist", ExitFailure},
		"plain file":  {filepath.Join(dir, "notes.txt"), "a file that is not a .tar.zst archive", ExitIntegrity},
		"no manifest": {filepath.Join(dir, "folder"), "a folder without manifest.json", ExitIntegrity},
		"not zstd":    {filepath.Join(dir, "fake.tar.zst"), "a .tar.zst file that is not zstd data", ExitIntegrity},
	}
	os.WriteFile(paths["plain file"].path, []byte("hello\n"), 0o644)
	os.Mkdir(paths["no manifest"].path, 0o755)
	os.WriteFile(filepath.Join(paths["no manifest"].path, "README"), []byte("a folder\n"), 0o644)
	// A tar header's first bytes: an archive that was never compressed.
	os.WriteFile(paths["not zstd"].path, append([]byte("manifest.json\x00"), make([]byte, 498)...), 0o644)
	commands := map[string][]string{
		"reproduce":     {"reproduce", "P", "--out", "OUT"},
		"sweep":         {"sweep", "P", "--out", "OUT"},
		"site":          {"site", "P", "--out", "OUT"},
		"requests":      {"requests", "P", "--benchmark", "icbcbench"},
		"bundle verify": {"bundle", "verify", "P"},
		"bundle seal":   {"bundle", "seal", "P"},
		"bundle diff":   {"bundle", "diff", "P", "P"},
		"bundle pack":   {"bundle", "pack", "P", "--out", "OUT.tar.zst"},
		"system add":    {"system", "add", "P", "--benchmark", "icbcbench", "--name", "x", "--provider", "openai", "--model", "m"},
		"system list":   {"system", "list", "P"},
		"system remove": {"system", "remove", "P", "--benchmark", "icbcbench", "--name", "x"},
		"batch submit":  {"batch", "submit", "--bundle", "P", "--provider", "openai", "--dir", "OUT"},
	}
	for cname, argv := range commands {
		for pname, p := range paths {
			t.Run(cname+"/"+pname, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				args := make([]string, len(argv))
				for i, a := range argv {
					args[i] = strings.Replace(a, "OUT", out, 1)
					if a == "P" {
						args[i] = p.path
					}
				}
				code, _, stderr := run(t, args...)
				if code != p.code {
					t.Errorf("exit %d, want %d\n%s", code, p.code, stderr)
				}
				if want := p.path + " is not a bundle: " + p.reason; !strings.Contains(stderr, want) {
					t.Errorf("stderr %q does not say %q", stderr, want)
				}
			})
		}
	}
}
