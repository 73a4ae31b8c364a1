//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package httpwire

import "net"

// rawConn has no check on this system: pooled connections are taken as
// open (a request on one the server closed fails as a connect error),
// and requests are written with net.Conn.Write.
func rawConn(net.Conn) (rawChecker, rawSender, error) { return nil, nil, nil }
