package main

import (
	"os"

	"gregor/cmd/internal/clientutil"
)

// commandConfigProps loads the admin tools' --command-config client
// properties file; nil when path is empty. An unreadable file is printed on
// stderr as one line with the tool's error prefix and comes back as
// errPrinted, so main exits 1 without printing it again.
func commandConfigProps(path, errPrefix string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	props, err := clientutil.LoadPropsFile(path)
	if err != nil {
		return nil, errPrinted(clientutil.Report(os.Stderr, errPrefix, err))
	}
	return props, nil
}
