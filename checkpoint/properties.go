package checkpoint

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// javaDateLayout is java.util.Date.toString: "Mon Nov 30 01:07:58 UTC 2026".
const javaDateLayout = "Mon Jan 02 15:04:05 MST 2006"

// FormatMetaProperties renders m as java.util.Properties.store(w, "")
// does on Java 18 and later: "#\n", "#<date>\n", then key=value lines
// sorted by key, with Properties' escapes. now is shown in UTC.
func FormatMetaProperties(m map[string]string, now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString("#\n#" + now.UTC().Format(javaDateLayout) + "\n")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(escapeProperty(k, true))
		b.WriteByte('=')
		b.WriteString(escapeProperty(m[k], false))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// escapeProperty is Properties.saveConvert with escUnicode set.
func escapeProperty(s string, isKey bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == ' ' && (isKey || i == 0):
			b.WriteString(`\ `)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '=' || r == ':' || r == '#' || r == '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			writeUnicodeEscape(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// writeUnicodeEscape writes r as \uXXXX (a surrogate pair above U+FFFF).
func writeUnicodeEscape(b *strings.Builder, r rune) {
	if r > 0xffff {
		r -= 0x10000
		fmt.Fprintf(b, `\u%04X\u%04X`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		return
	}
	fmt.Fprintf(b, `\u%04X`, r)
}

// WriteMetaProperties durably writes meta.properties dated now.
func WriteMetaProperties(fs vfs.FS, path string, m map[string]string) error {
	return WriteMetaPropertiesAt(fs, path, m, time.Now())
}

// WriteMetaPropertiesAt durably writes meta.properties dated now.
func WriteMetaPropertiesAt(fs vfs.FS, path string, m map[string]string, now time.Time) error {
	return vfs.WriteFileDurable(fs, path, FormatMetaProperties(m, now))
}

// ReadMetaProperties reads a Java properties file. A missing file is an
// error (unlike the offset checkpoints).
func ReadMetaProperties(fs vfs.FS, path string) (map[string]string, error) {
	if _, err := fs.Stat(path); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	text, err := readAll(fs, path)
	if err != nil {
		return nil, err
	}
	return ParseProperties(path, text)
}

// ParseProperties parses java.util.Properties text: comments (# or !),
// blank lines, key=value, key:value or "key value", backslash escapes and
// line continuations.
func ParseProperties(path string, text []byte) (map[string]string, error) {
	m := map[string]string{}
	lines := splitLines(text)
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continued(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		k, v := splitProperty(line)
		key, err := unescapeProperty(k)
		if err != nil {
			return nil, &record.CorruptionError{File: path, Line: start, Reason: err.Error()}
		}
		val, err := unescapeProperty(v)
		if err != nil {
			return nil, &record.CorruptionError{File: path, Line: start, Reason: err.Error()}
		}
		m[key] = val
	}
	return m, nil
}

// continued reports a line ending in an odd number of backslashes.
func continued(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits at the first unescaped '=', ':' or white space.
func splitProperty(line string) (key, value string) {
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
	}
	if i >= len(line) {
		return line, ""
	}
	key, rest := line[:i], strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// unescapeProperty undoes Properties' escapes.
func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, n, err := unicodeEscape(s[i+1:])
			if err != nil {
				return "", fmt.Errorf("%v in %q", err, s)
			}
			b.WriteRune(r)
			i += n
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// unicodeEscape decodes the XXXX of a \uXXXX escape (and a following low
// surrogate escape), returning the rune and the bytes consumed.
func unicodeEscape(s string) (rune, int, error) {
	if len(s) < 4 {
		return 0, 0, fmt.Errorf("short \\u escape")
	}
	v, err := strconv.ParseUint(s[:4], 16, 16)
	if err != nil {
		return 0, 0, fmt.Errorf("bad \\u escape")
	}
	r := rune(v)
	if utf16.IsSurrogate(r) && len(s) >= 10 && s[4:6] == `\u` {
		if lo, err := strconv.ParseUint(s[6:10], 16, 16); err == nil {
			if pair := utf16.DecodeRune(r, rune(lo)); pair != utf8.RuneError {
				return pair, 10, nil
			}
		}
	}
	return r, 4, nil
}
