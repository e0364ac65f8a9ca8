// Package doccheck keeps the documentation that lives beside the code true: the
// top README stays short and starts with the two commands, its map reaches every
// README in the repository, every link in a Markdown file resolves (file and
// heading), every repository path a README quotes exists, nothing cites a
// document that is not in the repository, and the error codes, routes and
// deploy settings the READMEs list are the code's (drift_test.go). It has no
// code of its own, only tests; it needs no database.
package doccheck

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// maxTopREADME is the hard limit on the top README: it is the map, and the
// detail belongs in the folder READMEs it links.
const maxTopREADME = 12 * 1024

// foreignDocs are documents that exist only outside the repository (the team's
// own notes beside the checkout). Nothing in the repository may cite them: a
// newcomer who clones it cannot follow such a reference. The names are built
// from parts so that this file does not cite them either.
var foreignDocs = []string{
	"design" + ".md",
	"scf-platform" + ".md",
	"wechatpay-v3" + ".md",
	"wechat-server-api" + ".md",
	"style" + ".md",
	".." + "/shared/docs",
}

// citingExts are the kinds of file that could cite a document.
var citingExts = map[string]bool{
	".go": true, ".sh": true, ".yml": true, ".yaml": true, ".sql": true, ".md": true, ".json": true,
}

// skipDirs are not the repository's own files: version control, and what the
// scripts build or start locally (all in .gitignore).
var skipDirs = map[string]bool{".git": true, ".local": true, "dist": true, "bin": true, "node_modules": true}

// repoRoot is the nearest directory above this package with both a go.mod and
// a README.md: the top of the repository.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if exists(dir, "go.mod") && exists(dir, "README.md") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod with a README.md above this package")
		}
		dir = parent
	}
}

// repoFiles lists the repository's files, as slash paths relative to root.
func repoFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && skipDirs[d.Name()] {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func read(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// markdown is one Markdown file taken apart for checking.
type markdown struct {
	rel      string          // slash path from the repository root
	links    []link          // [text](target), outside code
	code     []string        // inline code spans, outside fenced blocks
	anchors  map[string]bool // the heading ids GitHub gives this file
	sections map[string][]link
}

type link struct {
	target string
	line   int
}

var (
	fenceRE   = regexp.MustCompile("^\\s*(```|~~~)")
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	codeRE    = regexp.MustCompile("`+[^`]*`+")
	linkRE    = regexp.MustCompile(`\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
)

// parseMarkdown reads links, inline code and headings, ignoring fenced code
// blocks (shell examples are not links).
func parseMarkdown(rel, text string) *markdown {
	md := &markdown{rel: rel, anchors: map[string]bool{}, sections: map[string][]link{}}
	seen := map[string]int{}
	inFence := false
	section := ""
	for i, line := range strings.Split(text, "\n") {
		if fenceRE.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			id := slug(m[2])
			if n := seen[id]; n > 0 {
				md.anchors[id+"-"+strconv.Itoa(n)] = true
			} else {
				md.anchors[id] = true
			}
			seen[id]++
			if len(m[1]) == 2 {
				section = strings.TrimSpace(m[2])
			}
		}
		for _, c := range codeRE.FindAllString(line, -1) {
			md.code = append(md.code, strings.Trim(c, "`"))
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(line, ""), -1) {
			l := link{target: m[1], line: i + 1}
			md.links = append(md.links, l)
			md.sections[section] = append(md.sections[section], l)
		}
	}
	return md
}

// slug is the id GitHub gives a heading: lower case, spaces to hyphens, and
// every character that is not a letter, a digit, a hyphen or an underscore
// dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// external reports whether a link leaves the repository by design (a web page,
// an e-mail address); those are not checked here.
func external(target string) bool {
	u, err := url.Parse(target)
	return err == nil && u.Scheme != ""
}

// resolve turns a relative link of the file at rel into a slash path from the
// repository root, and its fragment. ok is false when it climbs out of the
// repository.
func resolve(rel, target string) (p, fragment string, ok bool) {
	target, fragment, _ = strings.Cut(target, "#")
	if unescaped, err := url.PathUnescape(target); err == nil {
		target = unescaped
	}
	if fragment != "" {
		if unescaped, err := url.PathUnescape(fragment); err == nil {
			fragment = unescaped
		}
	}
	switch {
	case target == "":
		p = rel // a heading of the same file
	case strings.HasPrefix(target, "/"):
		p = path.Clean(strings.TrimPrefix(target, "/"))
	default:
		p = path.Clean(path.Join(path.Dir(rel), target))
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", "", false
	}
	return p, fragment, true
}

// loadMarkdown parses every Markdown file of the repository.
func loadMarkdown(t *testing.T, root string, files []string) map[string]*markdown {
	t.Helper()
	out := map[string]*markdown{}
	for _, f := range files {
		if strings.HasSuffix(f, ".md") {
			out[f] = parseMarkdown(f, read(t, root, f))
		}
	}
	return out
}

func exists(root, rel string) bool {
	_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

// TestTopREADME: short, and the two commands first (CI reads the test command
// from there).
func TestTopREADME(t *testing.T) {
	root := repoRoot(t)
	text := read(t, root, "README.md")
	if len(text) >= maxTopREADME {
		t.Errorf("README.md is %d bytes; the limit is %d: move detail into the folder READMEs it links", len(text), maxTopREADME)
	}
	var first []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		first = append(first, line)
		if len(first) == 2 {
			break
		}
	}
	want := []string{"scripts/dev.sh", "scripts/test.sh"}
	for i, w := range want {
		if i >= len(first) || !strings.HasPrefix(first[i], w+" ") {
			t.Errorf("README.md: line %d of text should be the command %s, got %q", i+1, w, first)
		}
	}
}

// TestMapReachesEveryREADME: the top README's map links folder READMEs that
// exist, and every README.md in the repository can be reached from the top one
// by following links.
func TestMapReachesEveryREADME(t *testing.T) {
	root := repoRoot(t)
	files := repoFiles(t, root)
	mds := loadMarkdown(t, root, files)
	top := mds["README.md"]
	if top == nil {
		t.Fatal("no README.md at the top of the repository")
	}
	mapLinks := top.sections["Map"]
	readmes := 0
	for _, l := range mapLinks {
		p, _, ok := resolve("README.md", l.target)
		if !ok || external(l.target) || path.Base(p) != "README.md" {
			continue
		}
		readmes++
		if !exists(root, p) {
			t.Errorf("README.md:%d: the map links %s, which does not exist", l.line, l.target)
		}
	}
	if readmes == 0 {
		t.Errorf(`README.md has no "## Map" section linking folder READMEs`)
	}

	reached := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		md := mds[queue[0]]
		queue = queue[1:]
		if md == nil {
			continue
		}
		for _, l := range md.links {
			if external(l.target) {
				continue
			}
			p, _, ok := resolve(md.rel, l.target)
			if ok && strings.HasSuffix(p, ".md") && !reached[p] && mds[p] != nil {
				reached[p] = true
				queue = append(queue, p)
			}
		}
	}
	for _, f := range files {
		if path.Base(f) == "README.md" && !reached[f] {
			t.Errorf("%s cannot be reached from README.md's map: link it from the README of the folder above", f)
		}
	}
}

// TestLinksResolve: every relative link in every Markdown file points to a file
// or folder of the repository, and a link to a heading names one that exists.
func TestLinksResolve(t *testing.T) {
	root := repoRoot(t)
	mds := loadMarkdown(t, root, repoFiles(t, root))
	checked := 0
	for _, md := range mds {
		for _, l := range md.links {
			if external(l.target) {
				continue
			}
			checked++
			p, fragment, ok := resolve(md.rel, l.target)
			if !ok {
				t.Errorf("%s:%d: link %s leaves the repository", md.rel, l.line, l.target)
				continue
			}
			if !exists(root, p) {
				t.Errorf("%s:%d: link %s: %s does not exist", md.rel, l.line, l.target, p)
				continue
			}
			if fragment == "" {
				continue
			}
			if target := mds[p]; target != nil && !target.anchors[fragment] {
				t.Errorf("%s:%d: link %s: %s has no heading #%s", md.rel, l.line, l.target, p, fragment)
			}
		}
	}
	if checked == 0 {
		t.Error("no relative links found: the parser is broken")
	}
	t.Logf("%d relative links in %d Markdown files", checked, len(mds))
}

// repoPathRE matches inline code that is a path in the repository, such as
// `shared/handler/handlers.go`; patterns (`functions/*/events`) and
// placeholders (`functions/<name>/`) are not paths and do not match.
var repoPathRE = regexp.MustCompile(`^(functions|shared|infra|scripts)(/[A-Za-z0-9_.-]+)+/?$`)

// TestQuotedPathsExist: a README that names a file or folder of the repository
// in code names one that exists, so renaming a package cannot leave its
// documentation behind.
func TestQuotedPathsExist(t *testing.T) {
	root := repoRoot(t)
	mds := loadMarkdown(t, root, repoFiles(t, root))
	quoted := 0
	for _, md := range mds {
		for _, c := range md.code {
			if !repoPathRE.MatchString(c) {
				continue
			}
			quoted++
			if !exists(root, strings.TrimSuffix(c, "/")) {
				t.Errorf("%s: `%s` does not exist in the repository", md.rel, c)
			}
		}
	}
	t.Logf("%d quoted repository paths", quoted)
}

// TestNoForeignDocuments: no file cites a document that is not in the
// repository; the repository explains itself with its READMEs.
func TestNoForeignDocuments(t *testing.T) {
	root := repoRoot(t)
	files := repoFiles(t, root)
	scanned := 0
	for _, f := range files {
		if !citingExts[path.Ext(f)] {
			continue
		}
		scanned++
		text := read(t, root, f)
		for i, line := range strings.Split(text, "\n") {
			for _, doc := range foreignDocs {
				if strings.Contains(line, doc) {
					t.Errorf("%s:%d cites %s, which is not in the repository: cite the README that holds the content, or say the fact itself", f, i+1, doc)
				}
			}
		}
	}
	if scanned == 0 {
		t.Error("no files scanned: the walk is broken")
	}
	t.Logf("%d files scanned", scanned)
}
