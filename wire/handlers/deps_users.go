package handlers

import "errors"

// errNoUserStore: the broker was built without Broker.Users (tests).
var errNoUserStore = errors.New("no user credential store on this broker")
