package cli

import (
	"bufio"
	"fmt"
	"io"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// textTable is a meta.k8s.io/v1 Table as the plugin prints it: the column
// definitions and, per row, its cells as printed text and the namespace of
// its object. Cells are text from the moment they are read, so a table of
// 100,000 rows is never held as interface values, nor printed through fmt.
type textTable struct {
	columns []metav1.TableColumnDefinition
	rows    []textRow
}

// textRow is one row: its cells as kubectl prints them and its object's
// namespace ("" when the row carries no object, or a cluster-scoped one).
type textRow struct {
	cells     []string
	namespace string
}

// tableRowJSON is what is read of one row: the cells, and of the row's
// object only metadata.namespace; everything else in the object is skipped
// by the decoder, not built.
type tableRowJSON struct {
	Cells  []tableCell `json:"cells"`
	Object struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	} `json:"object"`
}

// tableCell is one cell as text: a string as it is, a number or a boolean
// as written (so an int64 prints exactly, as kubectl prints it), null as
// <none>, an object or array as its JSON.
type tableCell string

// noneCell is what kubectl prints for an absent cell.
const noneCell = "<none>"

// UnmarshalJSONFrom reads one cell from the decoder's stream.
func (c *tableCell) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '{', '[':
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		*c = tableCell(v)
		return nil
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() == 'n' {
		*c = noneCell
		return nil
	}
	*c = tableCell(tok.String())
	return nil
}

// decodeTable reads a Table from r row by row as it arrives: the rows are
// decoded while the server is still writing the rest, and no copy of the
// whole body is ever held. Members of the Table other than its columns and
// rows are skipped.
func decodeTable(r io.Reader) (*textTable, error) {
	dec := jsontext.NewDecoder(r, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if err := readDelim(dec, '{'); err != nil {
		return nil, err
	}
	t := &textTable{}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		switch name.String() {
		case "columnDefinitions":
			if err := jsonv2.UnmarshalDecode(dec, &t.columns); err != nil {
				return nil, fmt.Errorf("columnDefinitions: %w", err)
			}
		case "rows":
			if err := t.decodeRows(dec); err != nil {
				return nil, err
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return nil, err
			}
		}
	}
	if err := readDelim(dec, '}'); err != nil {
		return nil, err
	}
	return t, nil
}

// decodeRows reads the rows array, one row value at a time.
func (t *textTable) decodeRows(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return err
	}
	if err := readDelim(dec, '['); err != nil {
		return fmt.Errorf("rows: %w", err)
	}
	var row tableRowJSON
	for dec.PeekKind() == '{' {
		row.Cells, row.Object.Metadata.Namespace = row.Cells[:0], ""
		if err := jsonv2.UnmarshalDecode(dec, &row); err != nil {
			return fmt.Errorf("row %d: %w", len(t.rows), err)
		}
		cells := make([]string, len(row.Cells))
		for i, c := range row.Cells {
			cells[i] = string(c)
		}
		t.rows = append(t.rows, textRow{cells: cells, namespace: row.Object.Metadata.Namespace})
	}
	if err := readDelim(dec, ']'); err != nil {
		return fmt.Errorf("rows: %w", err)
	}
	return nil
}

// readDelim reads the next token, which must be the delimiter want.
func readDelim(dec *jsontext.Decoder, want jsontext.Kind) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != want {
		return fmt.Errorf("at offset %d: want %v, found %v", dec.InputOffset(), want, tok.Kind())
	}
	return nil
}

// writeAligned prints lines of cells in columns, byte for byte as
// text/tabwriter with padding 3 and spaces (kubectl's table layout) prints
// them joined by tabs: every column but the last as wide as its widest
// cell in runes plus 3. lines calls yield once per line and is called
// twice, once to measure and once to print, so the cells are walked where
// they already are instead of copied into the tabwriter's buffer.
func writeAligned(out io.Writer, lines func(yield func(line []string))) error {
	var widths []int
	lines(func(line []string) {
		for i, c := range line[:max(len(line)-1, 0)] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	})
	w := bufio.NewWriterSize(out, 64<<10)
	var pad []byte
	for _, wd := range widths {
		for len(pad) < wd+3 {
			pad = append(pad, ' ')
		}
	}
	lines(func(line []string) {
		for i, c := range line {
			_, _ = w.WriteString(c)
			if i < len(line)-1 {
				_, _ = w.Write(pad[:widths[i]+3-utf8.RuneCountInString(c)])
			}
		}
		_ = w.WriteByte('\n')
	})
	return w.Flush()
}
