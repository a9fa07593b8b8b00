package zkstore

import (
	"net"
	"os"
)

func exitCode(code int) { os.Exit(code) }

func mkdirTemp() (string, error) { return os.MkdirTemp("", "zkstore-test-") }

func freePortForTest() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
