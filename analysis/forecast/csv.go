package forecast

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"github.com/finrepro/finrepro/results"
)

// readCSV is results.ReadCSV behind a syntax pre-check: results.ReadCSV
// asks the csv reader for a field position after a parse error, which
// panics when the very first record is malformed, so such input is
// rejected here first with the same file:line error.
func readCSV(r io.Reader, file string) (*results.CSVTable, error) {
	b, err := io.ReadAll(io.LimitReader(r, results.MaxLine+1))
	if err != nil {
		return nil, results.Errorf(file, 0, "", "%v", err)
	}
	body, skipped := b, 0
	for len(body) > 0 && body[0] == '#' {
		_, body, _ = bytes.Cut(body, []byte("\n"))
		skipped++
	}
	cr := csv.NewReader(bytes.NewReader(body))
	cr.FieldsPerRecord = 0
	for {
		_, err := cr.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, results.Errorf(file, skipped+pe.Line, fmt.Sprintf("column %d", pe.Column), "%v", pe.Err)
		}
		if err != nil {
			return nil, results.Errorf(file, 0, "", "%v", err)
		}
	}
	return results.ReadCSV(bytes.NewReader(b), file)
}
