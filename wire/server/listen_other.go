//go:build !linux

package server

import "net"

// listenTCP binds addr. Outside Linux the backlog (socket.listen.backlog.size)
// is the OS's default: Gregor's listen(2) with a backlog is Linux-only.
func listenTCP(addr string, _ int) (net.Listener, error) { return net.Listen("tcp", addr) }
