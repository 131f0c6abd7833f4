package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// readBuildInfo is the build information the go command embedded.
func readBuildInfo() (*debug.BuildInfo, bool) { return debug.ReadBuildInfo() }

// versionText is what `bot version` prints: the go command's stamp, or
// "(devel)" when it had no version control to read (-buildvcs=false).
func versionText(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "bot: no build information in this binary\n"
	}
	var b strings.Builder
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	fmt.Fprintf(&b, "bot %s (module %s)\n", version, bi.Main.Path)
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "commit %s", rev)
		if at := settings["vcs.time"]; at != "" {
			fmt.Fprintf(&b, " of %s", at)
		}
		if settings["vcs.modified"] == "true" {
			b.WriteString(", with changes not committed")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("commit unknown: built without version control information\n")
	}
	goos, goarch := settings["GOOS"], settings["GOARCH"]
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	fmt.Fprintf(&b, "built with %s for %s/%s\n", bi.GoVersion, goos, goarch)
	return b.String()
}
