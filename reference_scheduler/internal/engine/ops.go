package engine

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/schedperf/reference_scheduler/internal/protocol"
	"github.com/schedperf/reference_scheduler/internal/world"
)

// CreateArgs are the arguments of engine.create.
type CreateArgs struct {
	Objects []json.RawMessage `json:"objects"`
}

// CreateResult is the reply to engine.create.
type CreateResult struct {
	Created int     `json:"created"`
	Seconds float64 `json:"seconds"` // wall time of the request
}

// Create creates objects through the clientset, in order; it stops at the first one refused
// (the ones before it stay created). Pods are recorded with their creation time.
func (e *Engine) Create(args CreateArgs) (*CreateResult, *protocol.Error) {
	begin := time.Now()
	e.wmu.Lock()
	want, synced, perr := e.create(args.Objects)
	e.wmu.Unlock()
	if perr != nil {
		return nil, perr
	}
	if perr := e.waitInformers(synced); perr != nil {
		return nil, perr
	}
	if want > 0 {
		// as kube-apiserver's clients see: a node created before a pod is known to the
		// scheduler when the pod arrives (the fake delivers events asynchronously, and a pod
		// tried before its node is in the cache waits out a backoff)
		if perr := waitFor(e.ctx, time.Minute, func() bool { return e.sched.Cache.NodeCount() >= want }); perr != nil {
			return nil, protocol.NewError(protocol.ErrInternal, fmt.Sprintf("engine.create: the scheduler's cache has %d nodes of %d created after a minute", e.sched.Cache.NodeCount(), want))
		}
	}
	return &CreateResult{Created: len(args.Objects), Seconds: time.Since(begin).Seconds()}, nil
}

// informerKey is an object the scheduler's informer of gvr must hold (namespace/name).
type informerKey struct {
	gvr schema.GroupVersionResource
	key string
}

// waitInformers waits until the scheduler's informers hold every object listed (objects of the
// kinds world.KindSynced names: PodGroups, which scheduler_perf's createPodGroups waits for).
func (e *Engine) waitInformers(keys []informerKey) *protocol.Error {
	for _, k := range keys {
		inf, err := e.factory.ForResource(k.gvr)
		if err != nil {
			return protocol.NewError(protocol.ErrInternal, fmt.Sprintf("engine.create: no informer for %v: %v", k.gvr, err))
		}
		informer := inf.Informer()
		e.factory.Start(e.ctx.Done()) // starts the informer if the scheduler did not use it
		has := func() bool {
			_, ok, err := informer.GetIndexer().GetByKey(k.key)
			return ok && err == nil
		}
		if perr := waitFor(e.ctx, time.Minute, has); perr != nil {
			return protocol.NewError(protocol.ErrInternal, fmt.Sprintf("engine.create: the scheduler's %s informer does not hold %s after a minute", k.gvr.Resource, k.key))
		}
	}
	return nil
}

// create creates the objects (e.wmu held); want is the number of nodes the scheduler's cache
// must hold before the create returns (0: no node was created), synced the objects its
// informers must hold.
func (e *Engine) create(objects []json.RawMessage) (want int, synced []informerKey, perr *protocol.Error) {
	nodes := 0
	for i, raw := range objects {
		obj, kind, gvr, perr := e.admit.Prepare(raw, i)
		if perr != nil {
			return 0, nil, perr
		}
		m, _ := meta.Accessor(obj)
		ns, name := m.GetNamespace(), m.GetName()
		switch kind {
		case "Pod":
			gated(obj.(*v1.Pod))
			e.notePod(ns, name)
		case "Node":
			nodes++
		}
		var action clienttesting.Action
		if ns == "" {
			action = clienttesting.NewRootCreateAction(gvr, obj)
		} else {
			action = clienttesting.NewCreateAction(gvr, ns, obj)
		}
		if _, err := e.client.Invokes(action, nil); err != nil {
			if kind == "Pod" {
				e.forgetPod(ns, name)
			}
			kindOf := protocol.ErrInternal
			if meta.IsNoMatchError(err) {
				kindOf = protocol.ErrUnsupported
			}
			if apierrors.IsAlreadyExists(err) {
				kindOf = protocol.ErrConflict
			}
			return 0, nil, &protocol.Error{Kind: kindOf, Message: fmt.Sprintf("objects[%d]: creating %s %s/%s: %v", i, kind, ns, name, err)}
		}
		if world.KindSynced(kind) {
			k := name
			if ns != "" {
				k = ns + "/" + name
			}
			synced = append(synced, informerKey{gvr, k})
		}
	}
	if nodes == 0 {
		return 0, synced, nil
	}
	e.nodes += nodes
	return e.nodes, synced, nil
}

func (e *Engine) notePod(namespace, name string) {
	t := e.since()
	e.mu.Lock()
	defer e.mu.Unlock()
	byName := e.pods[namespace]
	if byName == nil {
		byName = map[string]*podTimes{}
		e.pods[namespace] = byName
	}
	byName[name] = &podTimes{created: t}
}

func (e *Engine) forgetPod(namespace, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pods[namespace], name)
}

// DeleteArgs are the arguments of engine.delete.
type DeleteArgs struct {
	Refs []protocol.ObjectRef `json:"refs"`
}

// Delete deletes objects through the clientset, in order; it stops at the first one missing.
func (e *Engine) Delete(args DeleteArgs) (*CreateResult, *protocol.Error) {
	begin := time.Now()
	e.wmu.Lock()
	defer e.wmu.Unlock()
	for i, ref := range args.Refs {
		gvr, namespaced, ok := world.KindResource(ref.Kind)
		if !ok {
			return nil, &protocol.Error{Kind: protocol.ErrUnsupported, Field: fmt.Sprintf("refs[%d].kind", i),
				Message: fmt.Sprintf("refs[%d].kind: %q is not a supported kind", i, ref.Kind)}
		}
		ns := ref.Namespace
		if !namespaced {
			ns = ""
		} else if ns == "" {
			ns = metav1.NamespaceDefault
		}
		old, err := e.client.Tracker().Get(gvr, ns, ref.Name)
		if err != nil {
			return nil, protocol.NewError(protocol.ErrNotFound, fmt.Sprintf("refs[%d]: %s %s/%s not found", i, ref.Kind, ns, ref.Name))
		}
		var action clienttesting.Action
		if ns == "" {
			action = clienttesting.NewRootDeleteAction(gvr, ref.Name)
		} else {
			action = clienttesting.NewDeleteAction(gvr, ns, ref.Name)
		}
		if _, err := e.client.Invokes(action, nil); err != nil {
			return nil, protocol.NewError(protocol.ErrInternal, fmt.Sprintf("refs[%d]: deleting %s %s/%s: %v", i, ref.Kind, ns, ref.Name, err))
		}
		e.admit.Forget(ref.Kind, old)
		if ref.Kind == "Node" {
			e.nodes--
		}
	}
	return &CreateResult{Created: len(args.Refs), Seconds: time.Since(begin).Seconds()}, nil
}

// WaitArgs are the arguments of engine.wait: until Count pods of Namespace are bound, or
// TimeoutSeconds pass.
type WaitArgs struct {
	Namespace      string  `json:"namespace"`
	Count          int     `json:"count"`
	TimeoutSeconds float64 `json:"timeoutSeconds"`
}

// WaitResult is the reply to engine.wait.
type WaitResult struct {
	Bound    int     `json:"bound"`
	Want     int     `json:"want"`
	TimedOut bool    `json:"timedOut"`
	Seconds  float64 `json:"seconds"`
	Pending  int     `json:"pending"` // pods in the scheduling queue (any namespace) when it timed out
	Queue    string  `json:"queue"`   // the queue's own summary when it timed out
}

// Wait blocks until the namespace has at least Count pods bound, or the timeout passes.
func (e *Engine) Wait(args WaitArgs) (*WaitResult, *protocol.Error) {
	if args.TimeoutSeconds <= 0 {
		return nil, &protocol.Error{Kind: protocol.ErrProtocol, Field: "args.timeoutSeconds", Message: "engine.wait: timeoutSeconds must be > 0"}
	}
	begin := time.Now()
	timer := time.NewTimer(time.Duration(args.TimeoutSeconds * float64(time.Second)))
	defer timer.Stop()
	res := &WaitResult{Want: args.Count}
	for {
		e.mu.Lock()
		res.Bound = e.bound[args.Namespace]
		e.mu.Unlock()
		if res.Bound >= args.Count {
			res.Seconds = time.Since(begin).Seconds()
			return res, nil
		}
		select {
		case <-e.changed:
		case <-timer.C:
			e.mu.Lock()
			res.Bound = e.bound[args.Namespace]
			e.mu.Unlock()
			res.TimedOut = res.Bound < args.Count
			res.Seconds = time.Since(begin).Seconds()
			pods, summary := e.sched.SchedulingQueue.PendingPods()
			res.Pending, res.Queue = len(pods), summary
			return res, nil
		case <-e.ctx.Done():
			return nil, protocol.NewError(protocol.ErrInternal, "engine.wait: the engine stopped")
		}
	}
}

// StatsArgs are the arguments of engine.stats: the pods of which namespaces to list.
type StatsArgs struct {
	Namespaces []string `json:"namespaces"`
}

// PodRecord is one pod's creation and binding times (seconds since the engine started;
// bound null: not bound).
type PodRecord struct {
	Namespace   string   `json:"namespace"`
	Name        string   `json:"name"`
	Created     float64  `json:"created"`
	Bound       *float64 `json:"bound"`
	Node        string   `json:"node,omitempty"`
	Deleted     bool     `json:"deleted,omitempty"`     // removed from the store
	Terminating bool     `json:"terminating,omitempty"` // deletionTimestamp set, still stored
}

// StatsResult is the reply to engine.stats.
type StatsResult struct {
	Seconds    float64     `json:"seconds"`    // since the scheduling loop started
	CPUSeconds float64     `json:"cpuSeconds"` // the process's user + system CPU time
	GOMAXPROCS int         `json:"gomaxprocs"`
	NumCPU     int         `json:"numCPU"`
	Goroutines int         `json:"goroutines"`
	Bound      int         `json:"bound"`  // pods bound, every namespace
	Pods       []PodRecord `json:"pods"`   // the pods of the namespaces asked for, by creation time
	Errors     []string    `json:"errors"` // what background ops (churn, deletePods) could not do
}

// Stats reports the clock, CPU time, and the pods of the namespaces asked for.
func (e *Engine) Stats(args StatsArgs) *StatsResult {
	res := &StatsResult{Seconds: e.since(), CPUSeconds: cpuSeconds(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU: runtime.NumCPU(), Goroutines: runtime.NumGoroutine(), Pods: []PodRecord{}}
	e.mu.Lock()
	defer e.mu.Unlock()
	res.Bound = e.total
	res.Errors = append([]string{}, e.errors...)
	for _, ns := range args.Namespaces {
		for name, p := range e.pods[ns] {
			r := PodRecord{Namespace: ns, Name: name, Created: p.created, Node: p.node,
				Deleted: p.deleted, Terminating: p.terminating && !p.deleted}
			if p.bound > 0 {
				b := p.bound
				r.Bound = &b
			}
			res.Pods = append(res.Pods, r)
		}
	}
	sort.Slice(res.Pods, func(i, j int) bool {
		a, b := res.Pods[i], res.Pods[j]
		if a.Created != b.Created {
			return a.Created < b.Created
		}
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return res
}

// gated sets the condition kube-apiserver's pod strategy sets when a pod is created with
// scheduling gates (PodScheduled=False, reason SchedulingGated): a barrier with
// stageRequirement Attempted counts such a pod as attempted, as upstream's does.
func gated(pod *v1.Pod) {
	if len(pod.Spec.SchedulingGates) == 0 {
		return
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{Type: v1.PodScheduled,
		Status: v1.ConditionFalse, Reason: v1.PodReasonSchedulingGated,
		Message: "Scheduling is blocked due to non-empty scheduling gates"})
}
