package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/schedperf/reference_scheduler/internal/engine"
	"github.com/schedperf/reference_scheduler/internal/protocol"
)

// engineState is the running engine of this process (one per process).
type engineState struct {
	e *engine.Engine
}

func (s *server) stopEngine() {
	if s.engine != nil && s.engine.e != nil {
		s.engine.e.Stop()
	}
}

// engineOp serves the engine.* ops; ok is false for any other op.
func (s *server) engineOp(req *protocol.Request) (result any, perr *protocol.Error, ok bool) {
	switch req.Op {
	case "engine.start", "engine.create", "engine.delete", "engine.wait", "engine.stats", "engine.stop",
		"engine.update", "engine.deletePods", "engine.churn", "engine.task", "engine.barrier":
	default:
		return nil, nil, false
	}
	if req.Op == "engine.start" {
		if s.engine != nil {
			return nil, protocol.NewError(protocol.ErrConflict, "engine.start: the engine was already started in this process"), true
		}
		var args engine.StartArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		e, res, perr := engine.Start(s.world.Context(), args)
		if perr != nil {
			return nil, perr, true
		}
		s.engine = &engineState{e: e}
		return res, nil, true
	}
	if s.engine == nil || s.engine.e == nil {
		return nil, protocol.NewError(protocol.ErrConflict, req.Op+": send engine.start first"), true
	}
	e := s.engine.e
	switch req.Op {
	case "engine.create":
		var args engine.CreateArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		res, perr := e.Create(args)
		return res, perr, true
	case "engine.delete":
		var args engine.DeleteArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		res, perr := e.Delete(args)
		return res, perr, true
	case "engine.update":
		var args engine.UpdateArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		res, perr := e.Update(args)
		return res, perr, true
	case "engine.deletePods":
		var args engine.DeletePodsArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		res, perr := e.DeletePods(args)
		return res, perr, true
	case "engine.churn":
		var args engine.ChurnArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		res, perr := e.Churn(args)
		return res, perr, true
	case "engine.task":
		var args engine.TaskArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		res, perr := e.Task(args)
		return res, perr, true
	case "engine.barrier":
		var args engine.BarrierArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		res, perr := e.Barrier(args)
		return res, perr, true
	case "engine.wait":
		var args engine.WaitArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		res, perr := e.Wait(args)
		return res, perr, true
	case "engine.stats":
		var args engine.StatsArgs
		if perr := decodeArgs(req, &args); perr != nil {
			return nil, perr, true
		}
		return e.Stats(args), nil, true
	default: // engine.stop
		e.Stop()
		s.engine.e = nil
		return struct{}{}, nil, true
	}
}

// decodeArgs reads req.args strictly into out (absent args: the zero value).
func decodeArgs(req *protocol.Request, out any) *protocol.Error {
	if len(req.Args) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(req.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return &protocol.Error{Kind: protocol.ErrProtocol, Field: "args", Message: fmt.Sprintf("%s: args: %v", req.Op, err)}
	}
	return nil
}
