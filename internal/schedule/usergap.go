package schedule

import (
	"fmt"
	"time"
)

// UserGap is user-centric timing (AIPerf's and LMCache's model for cache
// retention experiments): each of N users sends a turn every Gap,
// user u's k-th turn intended at u·Gap/N + k·Gap, so the users are
// staggered evenly and the load is steady from the first second (no
// ramp-up cliff). A user takes sessions one after another (a session's
// turns, then the next session's). Think times are not used. When a
// turn's time comes while the user's previous answer is still streaming,
// it goes as soon as the answer ends: that shows as client wait, and the
// user's later turns keep their slots (the schedule does not drift).
type UserGap struct {
	N   int           // users (lanes), > 0
	Gap time.Duration // time between a user's turns, > 0
}

var _ Schedule = UserGap{}

// Name implements Schedule.
func (UserGap) Name() string { return "users" }

// Validate implements Schedule.
func (u UserGap) Validate() error {
	if u.N <= 0 || u.Gap <= 0 {
		return fmt.Errorf("users: %d users with a gap of %s; want at least one user and a gap above 0", u.N, u.Gap)
	}
	return nil
}

// Users implements Schedule.
func (u UserGap) Users() int { return max(u.N, 1) }

// Active implements Schedule: a user works on one session at a time.
func (UserGap) Active(int) int { return 1 }

// Arrivals implements Schedule: users take sessions, none arrive.
func (UserGap) Arrivals() Arrivals { return nil }

// TurnAt implements Schedule.
func (u UserGap) TurnAt(t Turn) time.Duration {
	n := time.Duration(u.Users())
	return time.Duration(t.User)*u.Gap/n + time.Duration(t.LaneTurn)*u.Gap
}
