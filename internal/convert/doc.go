// Package convert turns external chat datasets (ShareGPT in its many
// shapes, OpenAI "messages" JSONL and vLLM's JSON conversation list) into
// mtkit conversations, one file per input format, streaming and with every
// dropped conversation counted by reason.
//
// The pipeline is: inputs (JSON array or JSONL, detected per input) →
// records (sharegpt.go, openai.go, decoded by the allocation-light scanner
// in scan.go) → part merging of ShareGPT ids such as "abc_0", "abc_1"
// (parts.go) → de-duplication by id → cleaning, role-alternation repair
// and filters (filter.go) → optional seeded sampling (sample.go) →
// optional token counts → conv.Writer. Run ties it together and returns a
// Summary (summary.go) of what was read, dropped and written.
package convert
