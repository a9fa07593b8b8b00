package transactions

import (
	"io"
	"strings"
	"unicode/utf8"
)

// printTable writes headers and rows as Kafka's ToolsUtils.prettyPrintTable:
// every cell padded with spaces to its column's widest value (header
// included) and followed by a tab, one line per row, the header first.
// Every row has len(headers) cells. Widths count characters (Java's
// String.length counts UTF-16 units: the same outside astral planes).
func printTable(w io.Writer, headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
	}
	line(headers)
	for _, r := range rows {
		line(r)
	}
	io.WriteString(w, b.String())
}
