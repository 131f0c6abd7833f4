package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// errHelp is -h: the command printed its help, and run exits 0.
var errHelp = errors.New("help")

// usageErr is a command line that cannot run as given, with the sentence
// saying why: run prints it, then usage when set, and exits 2.
type usageErr struct{ msg, usage string }

func (e usageErr) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return usageErr{msg: fmt.Sprintf(format, args...)}
}

// flags is a command's flag set and its help: the positional arguments
// it takes, what it does, and one example.
type flags struct {
	*flag.FlagSet
	args    []string // the positional arguments, as the usage line names them
	about   string
	example string
	help    io.Writer // where -h prints the help
}

func newFlags(name string, help io.Writer, args []string, about, example string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run prints what went wrong, once
	return &flags{FlagSet: fs, args: args, about: about, example: example, help: help}
}

func (f *flags) usageLine() string {
	return strings.Join(append([]string{"usage: bot", f.Name(), "[flags]"}, f.args...), " ")
}

func (f *flags) printHelp() {
	fmt.Fprintf(f.help, "%s\n\n%s\n\nexample:\n  %s\n", f.usageLine(), wrap(f.about, 76), f.example)
	fmt.Fprintln(f.help, "\nflags:")
	f.SetOutput(f.help)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
}

// parse reads args, flags before or after the positional arguments
// ("--" ends the flags), and returns the positional arguments, as many
// as the usage line names.
func (f *flags) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.printHelp()
				return nil, errHelp
			}
			return nil, f.usageErr("%v", err)
		}
		rest := f.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	switch {
	case len(pos) == len(f.args):
		return pos, nil
	case len(f.args) == 0 && isConfigName(pos[0]):
		return nil, f.usageErr("takes no file: give the configuration as --config %s", pos[0])
	case len(f.args) == 0:
		return nil, f.usageErr("takes no file, got %s", strings.Join(pos, " "))
	case len(pos) < len(f.args):
		return nil, f.usageErr("missing %s", strings.Join(f.args[len(pos):], " "))
	}
	return nil, f.usageErr("wants %s, got %d files: %s", strings.Join(f.args, " "), len(pos), strings.Join(pos, " "))
}

func (f *flags) usageErr(format string, args ...any) error {
	return usageErr{msg: fmt.Sprintf(format, args...),
		usage: fmt.Sprintf("%s (bot %s -h for the flags and an example)", f.usageLine(), f.Name())}
}

// isConfigName reports whether a file's name says it is a configuration.
func isConfigName(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// wrap breaks each paragraph of text into lines of at most width bytes
// where its words allow.
func wrap(text string, width int) string {
	paras := strings.Split(text, "\n\n")
	for i, p := range paras {
		var b strings.Builder
		n := 0
		for _, w := range strings.Fields(p) {
			if n > 0 && n+1+len(w) > width {
				b.WriteByte('\n')
				n = 0
			} else if n > 0 {
				b.WriteByte(' ')
				n++
			}
			b.WriteString(w)
			n += len(w)
		}
		paras[i] = b.String()
	}
	return strings.Join(paras, "\n\n")
}

// cmdVersion prints the version, the commit and the Go that built it.
func cmdVersion(args []string, stdout io.Writer) error {
	fs := newFlags("version", stdout, nil, "Prints the version, the commit and the Go that built it.", "bot version")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	fmt.Fprint(stdout, versionText(readBuildInfo()))
	return nil
}
