package scores

import (
	"fmt"
	"slices"
	"strings"
)

// checkPairs refuses a requested pair naming a system that is not one of
// m, a pair of one system with itself and a pair asked twice.
func checkPairs(m *Matrix, requested [][2]string) error {
	for k, r := range requested {
		for _, name := range r {
			if !slices.Contains(m.Systems, name) {
				return fmt.Errorf("%s: pair %s,%s: no system %q (systems: %s)", m.File, r[0], r[1], name, strings.Join(m.Systems, ", "))
			}
		}
		if r[0] == r[1] {
			return fmt.Errorf("%s: pair %s,%s compares a system with itself", m.File, r[0], r[1])
		}
		if slices.Contains(requested[:k], r) {
			return fmt.Errorf("%s: pair %s,%s asked twice", m.File, r[0], r[1])
		}
	}
	return nil
}
