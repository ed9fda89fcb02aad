// Package jsonl is the JSON-lines form of records (docs/spec.md §3 and §4),
// both ways: Append renders a record as its one line (Len and LenAt give
// that line's length without rendering it, which the filesystem's stable
// positions rest on), and Parse and ParseLine read the lines a writer
// appends to log.jsonl, strictly (a bad line is an error wrapping
// partlog.ErrInvalid). `partfs dump --json`, the .jsonl views and the
// internal topics' JSON all render through it.
package jsonl
