// Command schedperf-reference runs the real kube-scheduler library as a decision oracle for
// schedperf: line-delimited JSON requests on stdin, one reply per line on stdout, in order.
// docs/reference-scheduler.md in the schedperf repository describes the protocol.
//
// Logs (klog) go to stderr; stdout carries replies only. math/rand is not seeded at random
// (kube-scheduler draws the preemption candidates' offset from it).
//
//go:debug randautoseed=0
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/klog/v2"

	"github.com/schedperf/reference_scheduler/internal/evaluate"
	"github.com/schedperf/reference_scheduler/internal/protocol"
	"github.com/schedperf/reference_scheduler/internal/world"
)

// maxLine bounds one request line (a large apply).
const maxLine = 256 << 20

func main() {
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	verbosity := flag.String("v", "0", "klog verbosity of the scheduler library's logs (stderr)")
	flag.Parse()
	_ = klogFlags.Set("v", *verbosity)
	_ = klogFlags.Set("logtostderr", "true")

	// Replies own stdout: anything else printing to os.Stdout goes to stderr.
	out := os.Stdout
	os.Stdout = os.Stderr
	os.Exit(serve(os.Stdin, out))
}

func serve(in io.Reader, out io.Writer) int {
	w := world.New()
	defer w.Close()
	s := &server{world: w}
	defer s.stopEngine()
	reader := bufio.NewReaderSize(in, 1<<20)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, err := readLine(reader)
		if len(bytes.TrimSpace(line)) > 0 {
			if encErr := enc.Encode(s.handle(line)); encErr != nil {
				fmt.Fprintf(os.Stderr, "schedperf-reference: writing a reply: %v\n", encErr)
				return 1
			}
		}
		if err == io.EOF {
			return 0
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "schedperf-reference: reading requests: %v\n", err)
			return 1
		}
	}
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("a request line is longer than %d bytes", maxLine)
		}
		if err != nil || !isPrefix {
			return buf, err
		}
	}
}

type server struct {
	world  *world.World
	hello  bool
	engine *engineState // engine.* ops (engine_ops.go)
}

func (s *server) handle(line []byte) protocol.Reply {
	var req protocol.Request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		// answer with the request's id when at least that can be read
		var idOnly struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &idOnly)
		return failure(idOnly.ID, protocol.NewError(protocol.ErrProtocol, "request is not a valid request object: "+err.Error()))
	}
	result, perr := s.dispatch(&req)
	if perr != nil {
		return failure(req.ID, perr)
	}
	return protocol.Reply{ID: req.ID, OK: true, Result: result}
}

func failure(id json.RawMessage, err *protocol.Error) protocol.Reply {
	return protocol.Reply{ID: id, OK: false, Error: err}
}

func (s *server) dispatch(req *protocol.Request) (any, *protocol.Error) {
	if req.Op != "hello" && !s.hello {
		return nil, protocol.NewError(protocol.ErrProtocol, fmt.Sprintf(`op %q before the handshake: send {"op":"hello","protocol":%d} first`, req.Op, protocol.Version))
	}
	switch req.Op {
	case "hello":
		if req.Protocol != protocol.Version {
			return nil, &protocol.Error{Kind: protocol.ErrProtocol, Field: "protocol",
				Message: fmt.Sprintf("protocol %d is not spoken here: this binary speaks protocol %d", req.Protocol, protocol.Version)}
		}
		s.hello = true
		return versionInfo()
	case "version":
		return versionInfo()
	case "config":
		return s.world.Configure(req.Config, req.FeatureGates)
	case "apply":
		return s.world.Apply(req.Objects)
	case "delete":
		return s.world.Delete(req.Refs)
	case "bind":
		if req.Name == "" || req.Node == "" {
			return nil, protocol.NewError(protocol.ErrProtocol, "bind needs name and node (namespace defaults to default)")
		}
		return s.world.Bind(req.Namespace, req.Name, req.Node, req.StartTime)
	case "assume":
		if req.Name == "" || req.Node == "" {
			return nil, protocol.NewError(protocol.ErrProtocol, "assume needs name and node (namespace defaults to default)")
		}
		return s.world.Assume(req.Namespace, req.Name, req.Node)
	case "forget":
		if req.Name == "" {
			return nil, protocol.NewError(protocol.ErrProtocol, "forget needs name (namespace defaults to default)")
		}
		return s.world.Forget(req.Namespace, req.Name)
	case "evaluate":
		if req.Name == "" {
			return nil, protocol.NewError(protocol.ErrProtocol, "evaluate needs name (namespace defaults to default)")
		}
		return evaluate.Run(s.world, req.Namespace, req.Name, evaluate.Options{Nodes: req.Nodes, Member: req.Member})
	default:
		if result, perr, ok := s.engineOp(req); ok {
			return result, perr
		}
		return nil, &protocol.Error{Kind: protocol.ErrProtocol, Field: "op",
			Message: fmt.Sprintf("unknown op %q (expected hello, version, config, apply, delete, bind, assume, forget, evaluate or engine.*)", req.Op)}
	}
}
