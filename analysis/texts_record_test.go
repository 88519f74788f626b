package analysis

import (
	"slices"
	"strings"
	"testing"
)

func TestTextRecords(t *testing.T) {
	for _, texts := range [][]string{nil, {""}, {"a", "", "ünï"}, {strings.Repeat("x", 300), "\xff\x00"}} {
		rec := string(AppendTexts(nil, texts))
		got, err := DecodeTexts(rec)
		if err != nil || !slices.Equal(got, texts) {
			t.Errorf("%q: got %q, %v", texts, got, err)
		}
	}
	// Hand-made records that are not one: {2, 1, 'a'} is two texts with
	// one given; {1, 0x81, 0x00, 'a'} spells the length 1 in two bytes,
	// not its shortest form; {1, 1, 'a', 'b'} has a byte after its text;
	// {5} counts more texts than bytes follow.
	for _, bad := range []string{"", "\x02\x01a", "\x01\x81\x00a", "\x01\x01ab", "\x05", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"} {
		if got, err := DecodeTexts(bad); err == nil || got != nil || !strings.Contains(err.Error(), "record damaged") {
			t.Errorf("%q: got %q, %v; want a damaged record", bad, got, err)
		}
	}
}
