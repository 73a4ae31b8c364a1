// Package sim is a simulated OpenAI-compatible inference server for demos,
// unit tests, fault injection and measuring the mtkit client itself.
//
// It serves GET /v1/models, POST /v1/chat/completions and POST
// /v1/completions, streaming (SSE) and not, and its timing is a model of
// a serving engine: the time to first token is a base plus a prefill cost
// per prompt token not found in an LRU prefix cache of token blocks (with
// an optional second tier that receives the blocks the first evicts, and
// a load cost per token found there), the decode time per token grows with the number of running sequences, and
// sequences beyond a cap wait in a FIFO queue. The output text is drawn
// from an embedded corpus, one token per chunk, deterministically from a
// seed. Faults (error statuses, 429 with Retry-After, stalls, dropped
// connections, malformed SSE lines) can be injected.
//
// Every chunk carries "sim_sent_ns", the server's Unix time in nanoseconds
// taken right before the chunk was written and flushed, so a benchmark can
// compare the client's receive times with the server's send times.
//
// docs/simulator.md describes the model and every knob.
package sim
