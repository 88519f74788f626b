package hisrubric

import (
	"fmt"
	"strings"
)

// ResearchPrompt writes the research task for company c (paper, Figure 8)
// with the structure's headers and empty tables, placeholders resolved.
func ResearchPrompt(s *Structure, c *Company) string {
	var b strings.Builder
	lang := languageNames[c.Language]
	fmt.Fprintf(&b, "Search and analyze the annual reports (%s version) from FY%d and FY%d for %s (%s) listed on %s (%s). ",
		lang, c.FY-1, c.FY, c.Name, c.Ticker, c.Exchange, c.Market)
	fmt.Fprintf(&b, "Assuming today's date is %s, generate a research report on this company. ", c.ValuationDate)
	b.WriteString("The report should be in markdown format and must follow the given structure below and include all the tables below. " +
		"Annual reports are sufficient for Sections 1 to 5; for Section 6, search for news, stock prices and any other data that supports the analysis.\n\n")
	fmt.Fprintf(&b, "Research Language: write your answer in %s. Always leave the section headers and table headers in English.\n\n", lang)
	b.WriteString("Research Output Format: your response must consist ONLY of the section and subsection headers and the completed markdown tables below. " +
		"No text outside of tables is permitted. Write all analyses and summaries within table cells, using detailed content (typically 4-8 sentences or structured bullet points).\n\n")
	p := c.Params()
	for _, sec := range s.Sections {
		fmt.Fprintf(&b, "## Section %s: %s\n\n", sec.ID, sec.Title)
		for _, sub := range sec.Subsections {
			fmt.Fprintf(&b, "### S%s: %s\n\n", sub.ID, sub.Title)
			cols := make([]string, len(sub.Table.Columns))
			align := make([]string, len(cols))
			for i, col := range sub.Table.Columns {
				cols[i] = p.Resolve(col)
				align[i] = ":--"
			}
			b.WriteString("|" + strings.Join(cols, "|") + "|\n|" + strings.Join(align, "|") + "|\n")
			rows := sub.Table.Rows
			if sub.Table.FreeRows {
				rows = []string{""}
			}
			for _, r := range rows {
				b.WriteString("|" + r + strings.Repeat("|", len(cols)) + "\n")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
