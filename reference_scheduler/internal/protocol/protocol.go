// Package protocol defines the line-delimited JSON messages schedperf-reference reads on
// stdin and writes on stdout: one request per line, one reply per line, in order.
// docs/reference-scheduler.md in the schedperf repository describes them.
package protocol

import "encoding/json"

// Version is the protocol version this binary speaks; the first request must be
// {"op":"hello","protocol":Version}.
const Version = 1

// Request is one line of input. Op selects the operation; the other fields belong to
// particular operations (the reference documents which).
type Request struct {
	ID           json.RawMessage   `json:"id,omitempty"`
	Op           string            `json:"op"`
	Protocol     int               `json:"protocol,omitempty"`
	Config       string            `json:"config,omitempty"`
	FeatureGates map[string]bool   `json:"featureGates,omitempty"`
	Objects      []json.RawMessage `json:"objects,omitempty"`
	Refs         []ObjectRef       `json:"refs,omitempty"`
	Namespace    string            `json:"namespace,omitempty"`
	Name         string            `json:"name,omitempty"`
	Node         string            `json:"node,omitempty"`
	StartTime    string            `json:"startTime,omitempty"`
	Nodes        []string          `json:"nodes,omitempty"`  // evaluate: only these nodes (a placement)
	Member       bool              `json:"member,omitempty"` // evaluate: a pod-group member (no PostFilter)
	Args         json.RawMessage   `json:"args,omitempty"`   // the arguments of an engine.* op
}

// ObjectRef names one object, for delete.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Reply is one line of output: Result when OK, Error otherwise.
type Reply struct {
	ID     json.RawMessage `json:"id,omitempty"`
	OK     bool            `json:"ok"`
	Result any             `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error kinds.
const (
	ErrProtocol      = "protocol"       // unreadable line, unknown op or field, missing hello
	ErrInvalidConfig = "invalid_config" // the KubeSchedulerConfiguration was rejected
	ErrInvalidObject = "invalid_object" // a manifest could not be decoded or was rejected
	ErrNotFound      = "not_found"      // a named object does not exist
	ErrConflict      = "conflict"       // the request contradicts the current state
	ErrUnsupported   = "unsupported"    // a kind or setting this binary does not handle
	ErrInternal      = "internal"       // the scheduler library failed
)

// Error says why a request failed. Field is the path of the offending field when there is
// one (first of Fields); Fields lists every field error.
type Error struct {
	Kind    string       `json:"kind"`
	Message string       `json:"message"`
	Field   string       `json:"field,omitempty"`
	Fields  []FieldError `json:"fields,omitempty"`
}

// FieldError is one invalid field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Errorf-style constructor.
func NewError(kind, message string) *Error { return &Error{Kind: kind, Message: message} }

// Hello is the reply to hello and version.
type Hello struct {
	Protocol     int    `json:"protocol"`
	Kubernetes   string `json:"kubernetes"`
	Go           string `json:"go"`
	BinarySHA256 string `json:"binarySHA256"`
}

// Plugin lists, per extension point, the enabled plugins of a profile (in order).
type Profile struct {
	SchedulerName            string              `json:"schedulerName"`
	PercentageOfNodesToScore *int32              `json:"percentageOfNodesToScore"`
	Plugins                  map[string][]string `json:"plugins"`
	ScoreWeights             map[string]int32    `json:"scoreWeights"`
}

// ConfigResult is the reply to config.
type ConfigResult struct {
	Profiles []Profile `json:"profiles"`
}

// Applied is one object written by apply, delete or bind.
type Applied struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Action    string `json:"action"` // created, updated, deleted, bound
}

// ObjectsResult is the reply to apply, delete and bind.
type ObjectsResult struct {
	Objects []Applied `json:"objects"`
}

// Status is a framework status: code name as kube-scheduler prints it (Success, Error,
// Unschedulable, UnschedulableAndUnresolvable, Wait, Skip, Pending), the plugin that
// returned it and its reasons.
type Status struct {
	Code    string   `json:"code"`
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons"`
}

// PluginPreFilter is one PreFilter plugin's answer.
type PluginPreFilter struct {
	Plugin    string   `json:"plugin"`
	Code      string   `json:"code"`
	Reasons   []string `json:"reasons"`
	NodeNames []string `json:"nodeNames"` // null: all nodes
}

// PreFilter is what PreFilter decided.
type PreFilter struct {
	Plugins   []PluginPreFilter `json:"plugins"`
	Status    Status            `json:"status"`
	NodeNames []string          `json:"nodeNames"` // merged PreFilterResult; null: all nodes
	Skipped   []string          `json:"skipped"`   // PreFilter said Skip: their Filter is not run
}

// Filter is the Filter result on every node PreFilter left.
type Filter struct {
	Feasible []string          `json:"feasible"`
	Rejected map[string]Status `json:"rejected"`
}

// PluginScores is one Score plugin's normalized, unweighted score per node, and its weight.
type PluginScores struct {
	Plugin string           `json:"plugin"`
	Weight int32            `json:"weight"`
	Scores map[string]int64 `json:"scores"`
}

// Score is PreScore and Score over the feasible nodes.
type Score struct {
	PreScore []Status         `json:"preScore"` // per PreScore plugin run, in order
	Status   Status           `json:"status"`   // PreScore's then Score's overall status
	Skipped  []string         `json:"skipped"`  // PreScore said Skip: their Score is not run
	Plugins  []PluginScores   `json:"plugins"`
	Totals   map[string]int64 `json:"totals"`
	Best     []string         `json:"best"`
	// ScoredByScheduler is false when kube-scheduler would not score (one feasible node).
	ScoredByScheduler bool `json:"scoredByScheduler"`
}

// Victim is a pod preemption would evict.
type Victim struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Node      string `json:"node"`
}

// PodRef names a pod.
type PodRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// PostFilter is the PostFilter (DefaultPreemption) outcome when no node fits; nothing of it
// is applied.
type PostFilter struct {
	Status             Status   `json:"status"`
	NominatedNode      *string  `json:"nominatedNode"` // null: nomination left as is
	Victims            []Victim `json:"victims"`
	ClearedNominations []PodRef `json:"clearedNominations"`
}

// Evaluation is the reply to evaluate.
type Evaluation struct {
	Pod        PodRef      `json:"pod"`
	Profile    string      `json:"profile"`
	Nodes      []string    `json:"nodes"` // the snapshot's node list order
	PreFilter  PreFilter   `json:"preFilter"`
	Filter     *Filter     `json:"filter"`
	Score      *Score      `json:"score"`
	PostFilter *PostFilter `json:"postFilter"`
	// Outcome: Scheduled (Score.Best holds the candidates), Unschedulable or Error.
	Outcome string `json:"outcome"`
	Message string `json:"message"`
}
