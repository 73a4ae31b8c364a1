// Package replay replays multi-turn conversations against an
// OpenAI-compatible server. Each turn sends the whole history (earlier user
// messages and the model's real answers); many simulated users run at once,
// as the Options' Schedule says: closed-loop (a fixed number of clients,
// each alternating between its active conversations), open-loop
// (conversations arrive on an absolute Poisson or constant schedule), a
// trace's clock, stages. One record.Record is emitted per request
// attempt and per choice, with timings taken where the bytes arrive.
package replay
