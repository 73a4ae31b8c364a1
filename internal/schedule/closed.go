package schedule

import "time"

// Closed is closed-loop users, vLLM's model and mtrun's default: Clients
// lanes, each keeping its share of Sessions in progress and
// alternating between them, one request in flight per lane. A session's
// first turn is ready when its lane takes it; a later turn is ready its
// think time after the previous answer ended.
type Closed struct {
	Clients  int // lanes (at least 1)
	Sessions int // sessions in progress in total (at least Clients)
}

var _ Schedule = Closed{}

// Name implements Schedule.
func (Closed) Name() string { return "closed" }

// Validate implements Schedule: every setting is valid (fewer than one
// client or session counts as one).
func (Closed) Validate() error { return nil }

// Users implements Schedule.
func (c Closed) Users() int { return max(c.Clients, 1) }

// Total is the number of sessions in progress over all lanes: Sessions,
// at least one per lane.
func (c Closed) Total() int { return max(c.Sessions, c.Users()) }

// Active implements Schedule: Total spread evenly over the lanes, the
// first lanes taking one more when they do not divide.
func (c Closed) Active(user int) int {
	n := c.Users()
	total := c.Total()
	q := total / n
	if user < total%n {
		q++
	}
	return q
}

// Arrivals implements Schedule: lanes take sessions, none arrive.
func (Closed) Arrivals() Arrivals { return nil }

// TurnAt implements Schedule.
func (Closed) TurnAt(t Turn) time.Duration { return afterThink(t) }
