// Package inferenceperf reads the config files of inference-perf
// (github.com/kubernetes-sigs/inference-perf) and derives the workload
// mtrun replays from one: the shared-prefix user sessions, the load
// stages with the arrival time of every request, and the server
// settings. Every key of a file is supported (inference-perf's meaning),
// mapped (taken by an mtkit setting, or noted as having no effect) or
// refused (an error naming the file, the line and the key); Keys lists
// them, and docs/inference-perf.md explains each.
package inferenceperf

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Config is an inference-perf config, with inference-perf's defaults
// where the file says nothing.
type Config struct {
	// File is the file's name, used in errors and notes.
	File   string
	Load   Load
	API    API
	Server Server // zero when the file has no server section
	// HasServer says the file has a server section.
	HasServer bool
	Data      SharedPrefix
	// Tokenizer is tokenizer.pretrained_model_name_or_path ("" if none).
	Tokenizer string
	// MetricsInterval is metrics.prometheus.scrape_interval (0 if none).
	MetricsInterval time.Duration
	// Notes say, for each mapped key of the file that changes nothing or
	// something else in mtrun, what mtrun does instead.
	Notes []string
}

// Load is the load section: constant or Poisson stages.
type Load struct {
	Poisson  bool
	Interval time.Duration // between stages
	Stages   []Stage
	// NumWorkers and WorkerMaxConcurrency are inference-perf's worker
	// pool (default: the number of CPUs, and 100).
	NumWorkers, WorkerMaxConcurrency int
	// BaseSeed is load.base_seed; nil when not given (inference-perf
	// then seeds from the clock).
	BaseSeed       *int64
	RequestTimeout time.Duration // 0: mtrun's default
	// Sweep, when set, replaces Stages by stages generated from a probe
	// of the server's saturation rate (sweep.go).
	Sweep *Sweep
}

// Sweep is load.sweep, with inference-perf's defaults.
type Sweep struct {
	Geometric     bool
	NumRequests   int
	Timeout       time.Duration
	NumStages     int
	StageDuration time.Duration
	Percentile    float64
}

// Stage is one load stage: Rate requests a second for Duration.
type Stage struct {
	Rate     float64
	Duration time.Duration
}

// API is the api section.
type API struct {
	Chat               bool // api.type chat; else completion
	Streaming          bool
	Headers            [][2]string // in file order
	SessionIDHeader    string
	SessionTokenHeader string
}

// Server is the server section.
type Server struct {
	Type, ModelName, BaseURL, APIKey string
	IgnoreEOS                        bool
}

// SharedPrefix is data.shared_prefix.
type SharedPrefix struct {
	Groups, UsersPerGroup                int
	SystemPromptLen, QuestionLen, OutLen Length
	Seed                                 *int64
	MultiTurn                            bool
}

// Length is a token length: fixed, or drawn from a distribution.
type Length struct {
	Fixed int
	Dist  *Distribution // nil: Fixed
}

// Distribution is inference-perf's length distribution.
type Distribution struct {
	Min, Max     int
	Mean, StdDev float64
	Skew         float64
	Type         string // normal, skew_normal, lognormal, uniform, poisson, fixed
}

// Detect reports whether head, the start of a file, looks like an
// inference-perf config: a YAML mapping whose top-level keys include
// load or data and are all keys of inference-perf's config.
func Detect(head []byte) bool {
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(head, &top); err != nil || len(top) == 0 {
		// A head cut in the middle of a file may not parse; read its
		// top-level keys line by line instead.
		top = map[string]yaml.Node{}
		for line := range bytes.Lines(head) {
			if k, _, ok := bytes.Cut(line, []byte(":")); ok && len(k) > 0 && k[0] != ' ' && k[0] != '#' && k[0] != '-' {
				top[string(bytes.TrimSpace(k))] = yaml.Node{}
			}
		}
	}
	_, load := top["load"]
	_, data := top["data"]
	if !load && !data {
		return false
	}
	for k := range top {
		if _, ok := keyIndex[k]; !ok {
			return false
		}
	}
	return true
}

// Parse reads an inference-perf config from data; name is the file's
// name in errors ("name:line: key: problem").
func Parse(name string, data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &Config{
		File: name,
		Load: Load{Interval: time.Second, NumWorkers: max(1, runtime.NumCPU()), WorkerMaxConcurrency: 100},
		Data: SharedPrefix{
			Groups: 10, UsersPerGroup: 10,
			SystemPromptLen: Length{Fixed: 100}, QuestionLen: Length{Fixed: 50}, OutLen: Length{Fixed: 50},
		},
	}
	p := &parser{file: name, c: c}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty: want inference-perf's config (load, data, server, api)", name)
	}
	if err := p.walk(doc.Content[0], ""); err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

// parser walks the YAML tree, checking every key against Keys.
type parser struct {
	file string
	c    *Config
	// seen holds the key node of each path given.
	seen map[string]*yaml.Node
	// legacy distributions of question and output lengths.
	questionDist, outputDist *Distribution
	dataType                 string
	loadType                 string
}

// errAt returns an error about the key at path, on n's line.
func (p *parser) errAt(n *yaml.Node, path, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", p.file, n.Line, path, fmt.Sprintf(format, args...))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// walk checks the mapping n at path and every key below it.
func (p *parser) walk(n *yaml.Node, path string) error {
	if p.seen == nil {
		p.seen = map[string]*yaml.Node{}
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		if path == "" {
			return fmt.Errorf("%s:%d: want a mapping of inference-perf's config sections (load, data, server, api)", p.file, n.Line)
		}
		return p.errAt(n, path, "want a mapping")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, v := n.Content[i], n.Content[i+1]
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		full := join(path, kn.Value)
		k, ok := keyIndex[full]
		if !ok {
			return p.errAt(kn, full, "not a key of inference-perf's config")
		}
		if isNull(v) {
			continue // inference-perf's None: the default
		}
		if k.Status == Refused && !p.acceptRefused(full, v) {
			return p.errAt(kn, full, "not supported by mtrun: %s", refusal(k))
		}
		p.seen[full] = kn
		if err := p.value(full, v); err != nil {
			return err
		}
	}
	return nil
}

func refusal(k *Key) string {
	if k.Note != "" {
		return k.Note
	}
	parent := k.Path[:strings.LastIndexByte(k.Path, '.')]
	if pk, ok := keyIndex[parent]; ok && pk.Note != "" {
		return pk.Note
	}
	return "see docs/inference-perf.md"
}

// acceptRefused reports whether a refused key's value asks for nothing
// mtrun lacks (an empty list of circuit breakers, google_managed false).
func (p *parser) acceptRefused(path string, v *yaml.Node) bool {
	switch path {
	case "load.circuit_breakers", "circuit_breakers":
		return v.Kind == yaml.SequenceNode && len(v.Content) == 0
	case "metrics.prometheus.google_managed", "data.use_chat_template":
		return v.Kind == yaml.ScalarNode && (v.Value == "false" || v.Value == "False")
	}
	return false
}

func isNull(v *yaml.Node) bool { return v.Kind == yaml.ScalarNode && v.Tag == "!!null" }

// value takes the value of the key at path.
func (p *parser) value(path string, v *yaml.Node) error {
	c := p.c
	var err error
	switch path {
	case "load", "api", "server", "tokenizer", "data", "data.shared_prefix", "metrics", "metrics.prometheus",
		"report", "report.request_lifecycle", "report.prometheus", "report.session_lifecycle", "report.goodput",
		"storage", "storage.local_storage":
		if path == "server" {
			c.HasServer = true
			c.Server.IgnoreEOS = true
		}
		return p.walk(v, path)
	case "load.type":
		p.loadType, err = p.enum(path, v, "constant", "poisson", "concurrent", "trace_replay", "trace_session_replay")
		if err == nil && p.loadType != "constant" && p.loadType != "poisson" {
			return p.errAt(v, path, "%s: not supported by mtrun (constant and poisson are)", p.loadType)
		}
		c.Load.Poisson = p.loadType == "poisson"
	case "load.interval":
		c.Load.Interval, err = p.seconds(path, v, true)
	case "load.stages":
		if v.Kind != yaml.SequenceNode {
			return p.errAt(v, path, "want a list of stages")
		}
		for i, s := range v.Content {
			st, err := p.stage(fmt.Sprintf("load.stages[%d]", i), s)
			if err != nil {
				return err
			}
			c.Load.Stages = append(c.Load.Stages, st)
		}
	case "load.sweep":
		c.Load.Sweep = &Sweep{NumRequests: 2000, Timeout: time.Minute, NumStages: 5, StageDuration: 180 * time.Second, Percentile: 95}
		return p.walk(v, path)
	case "load.sweep.type":
		var t string
		t, err = p.enum(path, v, "linear", "geometric")
		c.Load.Sweep.Geometric = t == "geometric"
	case "load.sweep.num_requests":
		c.Load.Sweep.NumRequests, err = p.positive(path, v)
	case "load.sweep.timeout":
		c.Load.Sweep.Timeout, err = p.seconds(path, v, false)
	case "load.sweep.num_stages":
		c.Load.Sweep.NumStages, err = p.positive(path, v)
		if err == nil && c.Load.Sweep.NumStages > 1000 {
			err = p.errAt(v, path, "%d: at most 1000 stages", c.Load.Sweep.NumStages)
		}
	case "load.sweep.stage_duration":
		var d int
		d, err = p.positive(path, v)
		c.Load.Sweep.StageDuration = time.Duration(d) * time.Second
	case "load.sweep.saturation_percentile":
		c.Load.Sweep.Percentile, err = p.float(path, v)
		if err == nil && (c.Load.Sweep.Percentile < 0 || c.Load.Sweep.Percentile > 100) {
			err = p.errAt(v, path, "%s: want a percentile from 0 to 100", v.Value)
		}
	case "load.num_workers":
		c.Load.NumWorkers, err = p.positive(path, v)
	case "load.worker_max_concurrency":
		c.Load.WorkerMaxConcurrency, err = p.positive(path, v)
	case "load.worker_max_tcp_connections":
		_, err = p.positive(path, v)
	case "load.base_seed":
		var s int64
		s, err = p.int64(path, v)
		c.Load.BaseSeed = &s
	case "load.request_timeout":
		c.Load.RequestTimeout, err = p.seconds(path, v, false)
	case "api.type":
		var t string
		t, err = p.enum(path, v, "completion", "chat", "anthropic_messages")
		if err == nil && t == "anthropic_messages" {
			return p.errAt(v, path, "anthropic_messages: not supported by mtrun (completion and chat are)")
		}
		c.API.Chat = t == "chat"
	case "api.streaming":
		c.API.Streaming, err = p.bool(path, v)
	case "api.headers":
		if v.Kind != yaml.MappingNode {
			return p.errAt(v, path, "want a mapping of header names to values")
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			c.API.Headers = append(c.API.Headers, [2]string{v.Content[i].Value, v.Content[i+1].Value})
		}
	case "api.session_id_header_key":
		c.API.SessionIDHeader, err = p.str(path, v)
	case "api.session_token_header_key":
		c.API.SessionTokenHeader, err = p.str(path, v)
	case "server.type":
		c.Server.Type, err = p.enum(path, v, "vllm", "sglang", "tgi", "mock")
	case "server.model_name":
		c.Server.ModelName, err = p.str(path, v)
	case "server.base_url":
		c.Server.BaseURL, err = p.str(path, v)
	case "server.ignore_eos":
		c.Server.IgnoreEOS, err = p.bool(path, v)
	case "server.api_key":
		c.Server.APIKey, err = p.str(path, v)
	case "tokenizer.pretrained_model_name_or_path":
		c.Tokenizer, err = p.str(path, v)
	case "tokenizer.trust_remote_code":
		_, err = p.bool(path, v)
	case "tokenizer.token":
		_, err = p.str(path, v) // never echoed: it is a secret
	case "data.type":
		p.dataType, err = p.str(path, v)
		if err == nil && p.dataType != "shared_prefix" {
			return p.errAt(v, path, "%q: not supported by mtrun (shared_prefix is)", p.dataType)
		}
	case "data.shared_prefix.num_unique_system_prompts", "data.shared_prefix.num_groups":
		c.Data.Groups, err = p.positive(path, v)
	case "data.shared_prefix.num_users_per_system_prompt", "data.shared_prefix.num_prompts_per_group":
		c.Data.UsersPerGroup, err = p.positive(path, v)
	case "data.shared_prefix.system_prompt_len":
		c.Data.SystemPromptLen, err = p.length(path, v)
	case "data.shared_prefix.question_len":
		c.Data.QuestionLen, err = p.length(path, v)
	case "data.shared_prefix.output_len":
		c.Data.OutLen, err = p.length(path, v)
	case "data.shared_prefix.question_distribution":
		p.questionDist, err = p.distribution(path, v)
	case "data.shared_prefix.output_distribution":
		p.outputDist, err = p.distribution(path, v)
	case "data.shared_prefix.seed":
		var s int64
		s, err = p.int64(path, v)
		c.Data.Seed = &s
	case "data.shared_prefix.enable_multi_turn_chat", "data.shared_prefix.group_as_user_session":
		var b bool
		b, err = p.bool(path, v)
		c.Data.MultiTurn = c.Data.MultiTurn || b
	case "metrics.type":
		_, err = p.enum(path, v, "prometheus", "default")
	case "metrics.prometheus.scrape_interval":
		c.MetricsInterval, err = p.seconds(path, v, false)
	case "metrics.prometheus.url", "metrics.prometheus.filters", "storage.local_storage.path",
		"storage.local_storage.report_file_prefix", "metrics.prometheus.google_managed",
		"data.use_chat_template", "load.circuit_breakers", "circuit_breakers":
		// Taken as they are; notes are made in finish.
	default:
		if strings.HasPrefix(path, "report.") {
			return nil // summaries are mtstats's; one note in finish
		}
		return p.errAt(v, path, "not handled by mtrun") // a key of Keys without a case: a bug
	}
	return err
}

// stage reads one element of load.stages.
func (p *parser) stage(path string, n *yaml.Node) (Stage, error) {
	var s Stage
	if n.Kind != yaml.MappingNode {
		return s, p.errAt(n, path, "want a mapping with rate and duration")
	}
	var rate, dur bool
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, v := n.Content[i], n.Content[i+1]
		full, generic := path+"."+kn.Value, "load.stages[]."+kn.Value
		k, ok := keyIndex[generic]
		switch {
		case !ok:
			return s, p.errAt(kn, full, "not a key of inference-perf's load stages")
		case isNull(v):
			continue
		case k.Status == Refused:
			return s, p.errAt(kn, full, "not supported by mtrun: %s", k.Note)
		}
		var err error
		switch kn.Value {
		case "rate":
			s.Rate, err = p.float(full, v)
			if err == nil && !(s.Rate > 0) {
				err = p.errAt(v, full, "%s: want a rate above 0", v.Value)
			}
			rate = true
		case "duration":
			var d int
			d, err = p.positive(full, v) // inference-perf takes whole seconds
			s.Duration, dur = time.Duration(d)*time.Second, true
		}
		if err != nil {
			return s, err
		}
	}
	if !rate || !dur {
		return s, p.errAt(n, path, "want both rate and duration (inference-perf requires them for constant and poisson loads)")
	}
	return s, nil
}

// length reads an int or a distribution.
func (p *parser) length(path string, v *yaml.Node) (Length, error) {
	if v.Kind == yaml.MappingNode {
		d, err := p.distribution(path, v)
		return Length{Dist: d}, err
	}
	n, err := p.int(path, v)
	if err == nil && n < 0 {
		err = p.errAt(v, path, "%d: want at least 0 tokens", n)
	}
	return Length{Fixed: n}, err
}

// distribution reads an inference-perf distribution, with its defaults
// and its checks.
func (p *parser) distribution(path string, v *yaml.Node) (*Distribution, error) {
	if v.Kind != yaml.MappingNode {
		return nil, p.errAt(v, path, "want a distribution (type, mean, std_dev, min, max)")
	}
	d := &Distribution{Min: 10, Max: 1024, Mean: 512, StdDev: 200, Type: "normal"}
	var variance *float64
	for i := 0; i+1 < len(v.Content); i += 2 {
		kn, x := v.Content[i], v.Content[i+1]
		full := path + "." + kn.Value
		if _, ok := distKeys[kn.Value]; !ok {
			return nil, p.errAt(kn, full, "not a key of inference-perf's distributions (type, min, max, mean, std_dev, variance, skew, total_count)")
		}
		if isNull(x) {
			continue
		}
		var err error
		switch kn.Value {
		case "min":
			d.Min, err = p.int(full, x)
		case "max":
			d.Max, err = p.int(full, x)
		case "mean":
			d.Mean, err = p.float(full, x)
		case "std_dev":
			d.StdDev, err = p.float(full, x)
		case "skew":
			d.Skew, err = p.float(full, x)
		case "variance":
			var f float64
			f, err = p.float(full, x)
			variance = &f
		case "type":
			d.Type, err = p.enum(full, x, "normal", "skew_normal", "lognormal", "uniform", "poisson", "fixed")
		case "total_count":
			_, err = p.int(full, x)
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case variance != nil && d.StdDev > 0:
		return nil, p.errAt(v, path, "give std_dev or variance, not both (std_dev defaults to 200: set it to 0 with variance)")
	case variance != nil && *variance < 0:
		return nil, p.errAt(v, path, "variance %g is negative", *variance)
	case d.Min > d.Max:
		return nil, p.errAt(v, path, "min %d is above max %d", d.Min, d.Max)
	case d.StdDev < 0:
		return nil, p.errAt(v, path, "std_dev %g is negative", d.StdDev)
	case d.Type == "lognormal" && d.Mean <= 0:
		return nil, p.errAt(v, path, "a lognormal needs a mean above 0")
	case d.Min < 0:
		return nil, p.errAt(v, path, "min %d: want at least 0 tokens", d.Min)
	case d.Max > maxTokens:
		return nil, p.errAt(v, path, "max %d: at most %d tokens", d.Max, maxTokens)
	}
	if variance != nil {
		d.StdDev = math.Sqrt(*variance)
	}
	return d, nil
}

// maxTokens bounds every length (a message of more is surely a typo).
const maxTokens = 1 << 22

// finish checks what needs the whole file and makes the notes.
func (p *parser) finish() error {
	c := p.c
	sp := "data.shared_prefix"
	if p.dataType != "shared_prefix" {
		if _, ok := p.seen["data"]; !ok {
			return fmt.Errorf("%s: data: missing; want data.type shared_prefix (inference-perf's default, mock, is not supported)", p.file)
		}
		return p.errAt(p.seen["data"], "data.type", "missing; want shared_prefix (inference-perf's default, mock, is not supported)")
	}
	if _, ok := p.seen[sp]; !ok {
		return p.errAt(p.seen["data"], sp, "missing: inference-perf requires it with data.type shared_prefix")
	}
	for _, d := range []struct {
		name   string
		inline *Length
		legacy *Distribution
	}{{"question", &c.Data.QuestionLen, p.questionDist}, {"output", &c.Data.OutLen, p.outputDist}} {
		if d.legacy == nil {
			continue
		}
		if d.inline.Dist != nil {
			return p.errAt(p.seen[sp+"."+d.name+"_distribution"], sp+"."+d.name+"_distribution", "give a distribution as %s_len or as %s_distribution, not both", d.name, d.name)
		}
		d.inline.Dist = d.legacy
	}
	if c.HasServer && c.Server.BaseURL == "" {
		return p.errAt(p.seen["server"], "server.base_url", "missing: inference-perf requires it in a server section")
	}
	if sw := c.Load.Sweep; sw != nil {
		if _, ok := p.seen["load.sweep.type"]; !ok {
			return p.errAt(p.seen["load.sweep"], "load.sweep.type", "missing: linear or geometric (inference-perf requires it)")
		}
		c.Load.Stages = nil // generated from the probe
	} else if len(c.Load.Stages) == 0 {
		n := p.seen["load"]
		if n == nil {
			return fmt.Errorf("%s: load.stages: missing; want at least one stage with rate and duration", p.file)
		}
		return p.errAt(n, "load.stages", "none given; want at least one stage with rate and duration")
	}
	note := func(path, format string, args ...any) {
		if n, ok := p.seen[path]; ok {
			c.Notes = append(c.Notes, fmt.Sprintf("%s:%d: %s: %s", p.file, n.Line, path, fmt.Sprintf(format, args...)))
		}
	}
	note("metrics.prometheus.url", "the Prometheus server is not queried: mtrun scrapes the server's own /metrics (--metrics-url for other endpoints)")
	note("metrics.prometheus.filters", "every metric of the scraped endpoints is kept")
	note("report", "mtrun writes one record per request; summaries (per stage, per turn) are mtstats's")
	note("storage", "outputs go where --records, --metrics-file and --manifest say")
	note("tokenizer.token", "not used: mtrun downloads nothing")
	return nil
}

// Scalars.

func (p *parser) scalar(path string, v *yaml.Node, want string) error {
	if v.Kind != yaml.ScalarNode {
		return p.errAt(v, path, "want %s", want)
	}
	return nil
}

func (p *parser) str(path string, v *yaml.Node) (string, error) {
	return v.Value, p.scalar(path, v, "a string")
}

func (p *parser) enum(path string, v *yaml.Node, values ...string) (string, error) {
	if err := p.scalar(path, v, "one of "+strings.Join(values, ", ")); err != nil {
		return "", err
	}
	for _, x := range values {
		if v.Value == x {
			return x, nil
		}
	}
	return "", p.errAt(v, path, "%q: want one of %s", v.Value, strings.Join(values, ", "))
}

func (p *parser) bool(path string, v *yaml.Node) (bool, error) {
	if err := p.scalar(path, v, "true or false"); err != nil {
		return false, err
	}
	var b bool
	if err := v.Decode(&b); err != nil {
		return false, p.errAt(v, path, "%q: want true or false", v.Value)
	}
	return b, nil
}

func (p *parser) int64(path string, v *yaml.Node) (int64, error) {
	if err := p.scalar(path, v, "a whole number"); err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 64)
	if err != nil {
		// pydantic takes 3.0 as 3, not 3.5.
		f, ferr := strconv.ParseFloat(v.Value, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return 0, p.errAt(v, path, "%q: want a whole number", v.Value)
		}
		n = int64(f)
	}
	return n, nil
}

func (p *parser) int(path string, v *yaml.Node) (int, error) {
	n, err := p.int64(path, v)
	if err == nil && (n > math.MaxInt32 || n < math.MinInt32) {
		return 0, p.errAt(v, path, "%d: out of range", n)
	}
	return int(n), err
}

func (p *parser) positive(path string, v *yaml.Node) (int, error) {
	n, err := p.int(path, v)
	if err == nil && n < 1 {
		err = p.errAt(v, path, "%d: want a number above 0", n)
	}
	return n, err
}

func (p *parser) float(path string, v *yaml.Node) (float64, error) {
	if err := p.scalar(path, v, "a number"); err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, p.errAt(v, path, "%q: want a number", v.Value)
	}
	return f, nil
}

// seconds reads a number of seconds; zero is allowed when zero is.
func (p *parser) seconds(path string, v *yaml.Node, zero bool) (time.Duration, error) {
	f, err := p.float(path, v)
	switch {
	case err != nil:
		return 0, err
	case f < 0 || f == 0 && !zero || f > 1e9:
		return 0, p.errAt(v, path, "%s: want a number of seconds above 0", v.Value)
	}
	return time.Duration(f * float64(time.Second)), nil
}
