package docs

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the import path every package of the repository starts with.
const module = "github.com/partfs/partfs"

// helpers are the test helpers, benchmarks and system tests: the table
// leaves them out, and only a conformance suite (a package whose name ends
// in "test") may import them outside tests.
var helpers = regexp.MustCompile(`^(internal/test\w*|internal/benchutil|bench(/.*)?|docs|systest|fs/e2e)$`)

// thirdParty says which packages may import a library that belongs to one
// concern: the FUSE library is the filesystem's (fs/position is not), the
// Kafka client the cluster backend's and its neighbours'. Test helpers and
// benchmarks are not held to it.
var thirdParty = map[string][]string{
	"github.com/hanwen/go-fuse/": {"fs", "fs/fstest", "cmd/partfs"},
	"github.com/twmb/franz-go/":  {"kafkalog", "devcluster", "internaltopic", "schema"},
}

// pkgImports holds a package's imports of packages of the repository
// (relative paths) and of other modules, from its files and its tests'.
type pkgImports struct {
	ours, others, tests map[string]bool
}

// treeImports parses the import lines of every Go file of the repository.
func treeImports(t *testing.T, root string) map[string]*pkgImports {
	t.Helper()
	pkgs := map[string]*pkgImports{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &pkgImports{map[string]bool{}, map[string]bool{}, map[string]bool{}}
			pkgs[rel] = p
		}
		test := strings.HasSuffix(path, "_test.go")
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			ours, isOurs := strings.CutPrefix(ip, module+"/")
			switch {
			case test && isOurs:
				p.tests[ours] = true
			case isOurs:
				p.ours[ours] = true
			case !test:
				p.others[ip] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// hasCode reports whether dir holds a Go file that is not a test.
func hasCode(t *testing.T, dir string) bool {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range m {
		if !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}

// layer is one row of design.md's table: a package and the packages of
// the repository it imports.
type layer struct {
	pkg  string
	deps []string
}

// rowRE matches a row's last words: its imports in parentheses.
var rowRE = regexp.MustCompile(`\(([^()]*)\)\s*$`)

// designLayers reads the table of design.md: the code block after
// "Dependencies flow one way"; a row starts at a line's first column and
// goes on over the indented lines after it.
func designLayers(t *testing.T) []layer {
	t.Helper()
	b, err := os.ReadFile("design.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, after, ok := strings.Cut(doc, "Dependencies flow one way")
	if !ok {
		t.Fatal("design.md: no table after \"Dependencies flow one way\"")
	}
	_, block, _ := strings.Cut(after, "```\n")
	block, _, _ = strings.Cut(block, "```")
	var rows []string
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
		case line[0] != ' ':
			rows = append(rows, line)
		case len(rows) > 0:
			rows[len(rows)-1] += " " + strings.TrimSpace(line)
		}
	}
	var layers []layer
	for _, row := range rows {
		l := layer{pkg: strings.Fields(row)[0]}
		m := rowRE.FindStringSubmatch(row)
		if m == nil {
			t.Errorf("design.md: the row of %s does not end with its imports in parentheses", l.pkg)
			continue
		}
		if m[1] != "imports nothing of ours" && m[1] != "nothing" {
			for _, d := range strings.Split(m[1], ",") {
				l.deps = append(l.deps, strings.TrimSpace(d))
			}
		}
		layers = append(layers, l)
	}
	return layers
}

// TestLayers checks the layering docs/design.md draws against the
// imports of the tree: every package with code has its row (test helpers
// aside) and every row a package; a row names exactly the packages of
// the repository that package's code imports, all of them in rows above
// it; a package's tests import only packages above it, itself and the
// test helpers (a test joining packages that may not import each other
// lives in fs/e2e or systest); the FUSE and Kafka client libraries are
// imported only where thirdParty allows.
func TestLayers(t *testing.T) {
	root := ".."
	tree := treeImports(t, root)
	layers := designLayers(t)
	above := map[string]bool{}
	inTable := map[string]bool{}
	for _, l := range layers {
		inTable[l.pkg] = true
		p, ok := tree[l.pkg]
		if !ok || !hasCode(t, filepath.Join(root, l.pkg)) {
			t.Errorf("design.md has a row for %s, which is not a package with code", l.pkg)
			continue
		}
		var got []string
		for d := range p.ours {
			got = append(got, d)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(l.deps))
		if !slices.Equal(got, want) {
			t.Errorf("design.md says %s imports (%s); its code imports (%s)", l.pkg, strings.Join(want, ", "), strings.Join(got, ", "))
		}
		for _, d := range got {
			if helpers.MatchString(d) && !strings.HasSuffix(l.pkg, "test") {
				t.Errorf("%s imports the test helper %s", l.pkg, d)
			}
			if !above[d] && !helpers.MatchString(d) {
				t.Errorf("%s imports %s, which is not in a row above it", l.pkg, d)
			}
		}
		for d := range p.tests {
			// a conformance suite below the package is what its tests run
			if d != l.pkg && !above[d] && !helpers.MatchString(d) && !strings.HasSuffix(d, "test") {
				t.Errorf("a test of %s imports %s, which is not above it (such a test belongs in fs/e2e or systest)", l.pkg, d)
			}
		}
		above[l.pkg] = true
	}
	for pkg, p := range tree {
		code := hasCode(t, filepath.Join(root, pkg))
		if code && !inTable[pkg] && !helpers.MatchString(pkg) {
			t.Errorf("%s has no row in design.md's table", pkg)
		}
		if helpers.MatchString(pkg) {
			continue
		}
		for lib, may := range thirdParty {
			for ip := range p.others {
				if strings.HasPrefix(ip, lib) && !slices.Contains(may, pkg) {
					t.Errorf("%s imports %s; only %s may", pkg, ip, strings.Join(may, ", "))
				}
			}
		}
	}
}
