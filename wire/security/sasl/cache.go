package sasl

import "sync"

// CredentialCache is a broker's copy of every user's SCRAM credentials
// (Kafka's CredentialCache), kept current from /config/users and its
// change notifications. Safe for concurrent use: connections read it
// while the loader replaces users.
type CredentialCache struct {
	mu    sync.RWMutex
	users map[string]map[string]ScramCredential // user → mechanism → credential
}

// NewCredentialCache returns an empty cache.
func NewCredentialCache() *CredentialCache {
	return &CredentialCache{users: map[string]map[string]ScramCredential{}}
}

// Get returns user's credential for mechanism (e.g. "SCRAM-SHA-256").
// A nil cache has no users.
func (c *CredentialCache) Get(mechanism, user string) (ScramCredential, bool) {
	if c == nil {
		return ScramCredential{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	cr, ok := c.users[user][mechanism]
	return cr, ok
}

// SetUser replaces every credential of user (an empty map removes the user).
func (c *CredentialCache) SetUser(user string, creds map[string]ScramCredential) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(creds) == 0 {
		delete(c.users, user)
		return
	}
	c.users[user] = creds
}

// Users returns how many users have at least one credential.
func (c *CredentialCache) Users() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.users)
}
