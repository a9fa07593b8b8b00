package server

import "time"

// Client quota throttling (KIP-219). A handler's response carries the
// throttle time (wire.Response.Throttle) and throttle_time_ms; once the
// writer has sent it, the connection is muted: the reader handles no
// further request until the throttle ends, as Kafka's SocketServer mutes
// a throttled channel (ThrottledChannel, ChannelMuteEvent.THROTTLE_STARTED)
// whatever the request version. Clients that know KIP-219 (newer request
// versions) wait out the time themselves and send nothing meanwhile;
// older clients simply find their next request held back.

// mute starts (or extends) a throttle of d from now.
func (c *conn) mute(d time.Duration) {
	until := time.Now().Add(d).UnixNano()
	for {
		cur := c.mutedUntil.Load()
		if cur >= until || c.mutedUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// waitMute blocks the reader while the connection is muted; false when
// the connection closes meanwhile.
func (c *conn) waitMute() bool {
	for {
		d := time.Until(time.Unix(0, c.mutedUntil.Load()))
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			return false
		}
	}
}
