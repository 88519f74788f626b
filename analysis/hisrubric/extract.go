package hisrubric

// An Answer is an item's predicted answer as extracted from a report.
type Answer struct {
	Text  string
	Found bool
	// Why says why nothing was found ("no table", "no row", ...).
	Why string
}

// Extract finds item it's predicted answer in a checked report: the cell
// of its row (or, in free-row tables, of the row the truth names) and
// column in the table under its subsection. Values in tables with
// Multiplier and Currency columns carry both ("1,721 Millions USD").
func Extract(c *Check, it *Item, t Truth, p Params) Answer {
	row := it.Row
	if it.FreeRow() {
		row = t.Row
	}
	return extract(c, it, p, row, colKey(p.Resolve(it.Column)), key(row))
}

// extract is Extract with the item's row field and the keys of its
// column and row (want and rk) worked out.
func extract(c *Check, it *Item, p Params, row, want, rk string) Answer {
	tab := c.Tables[it.Subsection]
	if tab == nil {
		return Answer{Why: "no table"}
	}
	col, mult, cur := -1, -1, -1
	for i, h := range tab.colKeys {
		switch h {
		case want:
			if col < 0 {
				col = i
			}
		case "multiplier":
			mult = i
		case "currency":
			cur = i
		}
	}
	if col < 0 {
		return Answer{Why: "no column " + p.Resolve(it.Column)}
	}
	for i, r := range tab.Rows {
		if tab.rowKeys[i] != rk {
			continue
		}
		text := r[col]
		if text == "" {
			return Answer{Why: "empty cell"}
		}
		if it.Numeric && col != mult && col != cur {
			for _, extra := range []int{mult, cur} {
				if extra >= 0 && r[extra] != "" {
					text += " " + r[extra]
				}
			}
		}
		return Answer{Text: text, Found: true}
	}
	return Answer{Why: "no row " + clip(row, 40)}
}
