package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/names"
	clienttesting "k8s.io/client-go/testing"

	"github.com/schedperf/reference_scheduler/internal/protocol"
	"github.com/schedperf/reference_scheduler/internal/world"
)

// defaultGracePeriod is a pod's terminationGracePeriodSeconds when its spec has none.
const defaultGracePeriod = int64(30)

// UpdateArgs are the arguments of engine.update: scheduler_perf's updateAny (Update, then
// UpdateStatus, of each object; with subresource resize only the containers' resources of
// the stored pod change).
type UpdateArgs struct {
	Objects      []json.RawMessage `json:"objects"`
	Subresources []string          `json:"subresources"`
}

// Update replaces stored objects, in order; it stops at the first one refused.
func (e *Engine) Update(args UpdateArgs) (*CreateResult, *protocol.Error) {
	begin := time.Now()
	resize := false
	for i, s := range args.Subresources {
		switch s {
		case "resize":
			resize = true
		case "status":
		default:
			return nil, &protocol.Error{Kind: protocol.ErrUnsupported, Field: fmt.Sprintf("subresources[%d]", i),
				Message: fmt.Sprintf("subresources[%d]: %q is not supported (resize, status)", i, s)}
		}
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	stored := func(gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
		return e.client.Tracker().Get(gvr, ns, name)
	}
	for i, raw := range args.Objects {
		obj, old, kind, gvr, perr := e.admit.PrepareUpdate(raw, i, stored)
		if perr != nil {
			return nil, perr
		}
		if pod, ok := obj.(*v1.Pod); ok && resize {
			obj = resized(old.(*v1.Pod), pod)
		}
		m, _ := meta.Accessor(obj)
		var action clienttesting.Action
		if ns := m.GetNamespace(); ns == "" {
			action = clienttesting.NewRootUpdateAction(gvr, obj)
		} else {
			action = clienttesting.NewUpdateAction(gvr, ns, obj)
		}
		if _, err := e.client.Invokes(action, nil); err != nil {
			return nil, protocol.NewError(protocol.ErrInternal, fmt.Sprintf("objects[%d]: updating %s %s: %v", i, kind, m.GetName(), err))
		}
	}
	return &CreateResult{Created: len(args.Objects), Seconds: time.Since(begin).Seconds()}, nil
}

// resized is the stored pod with the containers' resources of the new one (the resize
// subresource), and the new one's status (UpdateStatus).
func resized(old, new *v1.Pod) *v1.Pod {
	out := old.DeepCopy()
	for i := range out.Spec.Containers {
		if i < len(new.Spec.Containers) {
			out.Spec.Containers[i].Resources = *new.Spec.Containers[i].Resources.DeepCopy()
		}
	}
	out.Status = *new.Status.DeepCopy()
	out.ResourceVersion = new.ResourceVersion
	return out
}

// deletePod deletes a pod as kube-apiserver does with default options and no kubelet or
// finalizer controller running: a pod with finalizers, or bound to a node with a grace
// period (terminationGracePeriodSeconds not 0; 30 when unset), only gets a
// deletionTimestamp and stays; any other pod is removed. e.wmu is held.
func (e *Engine) deletePod(ns, name string) error {
	gvr, _, _ := world.KindResource("Pod")
	obj, err := e.client.Tracker().Get(gvr, ns, name)
	if err != nil {
		return err
	}
	pod := obj.(*v1.Pod)
	grace := defaultGracePeriod
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		grace = 0
	}
	if len(pod.Finalizers) > 0 || grace > 0 {
		if pod.DeletionTimestamp != nil {
			return nil
		}
		p := pod.DeepCopy()
		now := metav1.Now()
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace
		if _, err = e.client.Invokes(clienttesting.NewUpdateAction(gvr, ns, p), nil); err == nil {
			e.notePodGone(ns, name, false)
		}
		return err
	}
	_, err = e.client.Invokes(clienttesting.NewDeleteAction(gvr, ns, name), nil)
	return err
}

// task is one background op: a paced deletePods or a churn.
type task struct {
	Kind    string   `json:"kind"`
	Ticks   int      `json:"ticks"`   // ticks done
	Created int      `json:"created"` // objects created
	Deleted int      `json:"deleted"` // objects deleted (pods: or given a deletionTimestamp)
	Done    bool     `json:"done"`    // no more ticks will come
	Errors  []string `json:"errors"`  // deletions that failed
}

// TaskResult is the reply to engine.deletePods, engine.churn and engine.task.
type TaskResult struct {
	ID       int     `json:"id"`
	TimedOut bool    `json:"timedOut"`
	Seconds  float64 `json:"seconds"`
	task
}

func (e *Engine) newTask(kind string) (int, *task) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := &task{Kind: kind, Errors: []string{}}
	e.tasks = append(e.tasks, t)
	return len(e.tasks) - 1, t
}

func (e *Engine) taskResult(id int) *TaskResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := *e.tasks[id]
	t.Errors = append([]string{}, t.Errors...)
	return &TaskResult{ID: id, task: t}
}

// update changes a task under e.mu; an error is also kept for engine.stats.
func (e *Engine) update(t *task, f func(t *task), errMsg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(t)
	if errMsg != "" {
		t.Errors = append(t.Errors, errMsg)
		e.errors = append(e.errors, errMsg)
	}
}

// every runs tick once per interval (Go's ticker: the first one interval after the start)
// on its own goroutine until it returns false or the engine stops; then the task is done.
func (e *Engine) every(t *task, interval time.Duration, tick func() bool) {
	go func() {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		defer e.update(t, func(t *task) { t.Done = true }, "")
		for {
			select {
			case <-e.ctx.Done():
				return
			case <-ticker.C:
				if !tick() {
					return
				}
			}
		}
	}()
}

// DeletePodsArgs are the arguments of engine.deletePods: scheduler_perf's deletePods.
type DeletePodsArgs struct {
	Namespace     string            `json:"namespace"`
	LabelSelector map[string]string `json:"labelSelector"`
	PerSecond     int               `json:"perSecond"` // 0: all at once, before the reply
}

// DeletePods deletes the pods of a namespace matching a label selector, in creation order (as
// kube-apiserver deletes: see deletePod). With PerSecond > 0 the pods, listed now, are
// deleted one per tick in the background: wait for the task with engine.task.
func (e *Engine) DeletePods(args DeletePodsArgs) (*TaskResult, *protocol.Error) {
	if args.PerSecond < 0 {
		return nil, protocol.NewError(protocol.ErrProtocol, "engine.deletePods: perSecond must be >= 0")
	}
	gvr, _, _ := world.KindResource("Pod")
	sel := labels.SelectorFromSet(args.LabelSelector)
	e.wmu.Lock()
	listed, err := e.client.Tracker().List(gvr, v1.SchemeGroupVersion.WithKind("Pod"), args.Namespace)
	e.wmu.Unlock()
	if err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	var victims []*v1.Pod
	for i := range listed.(*v1.PodList).Items {
		if args.Namespace == "" {
			break // the tracker lists every namespace for ""; upstream's lister, none
		}
		p := &listed.(*v1.PodList).Items[i]
		if sel.Matches(labels.Set(p.Labels)) {
			victims = append(victims, p)
		}
	}
	sort.SliceStable(victims, func(i, j int) bool {
		a, b := victims[i].CreationTimestamp, victims[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return victims[i].Name < victims[j].Name
	})
	id, t := e.newTask("deletePods")
	next := 0
	del := func() bool {
		p := victims[next]
		next++
		e.wmu.Lock()
		err := e.deletePod(p.Namespace, p.Name)
		e.wmu.Unlock()
		msg := ""
		if err != nil {
			msg = fmt.Sprintf("unable to delete pod %s: %v", p.Name, err)
		}
		e.update(t, func(t *task) {
			t.Ticks++
			if err == nil {
				t.Deleted++
			}
		}, msg)
		return next < len(victims)
	}
	if args.PerSecond == 0 || len(victims) == 0 {
		for len(victims) > 0 && del() {
		}
		e.update(t, func(t *task) { t.Done = true }, "")
		return e.taskResult(id), nil
	}
	e.every(t, time.Second/time.Duration(args.PerSecond), del)
	return e.taskResult(id), nil
}

// ChurnArgs are the arguments of engine.churn: scheduler_perf's churn. Objects are the
// rendered templates (namespaced ones with their namespace); each creation names its object
// as the API server does from metadata.generateName (5 random characters appended).
type ChurnArgs struct {
	Mode                 string            `json:"mode"` // create | recreate
	Number               int               `json:"number"`
	IntervalMilliseconds int               `json:"intervalMilliseconds"`
	Objects              []json.RawMessage `json:"objects"`
}

type churnRef struct{ kind, namespace, name string }

// Churn starts a churn in the background: every interval, mode create creates one object per
// template (Number ticks; 0: until the engine stops), mode recreate keeps a ring of Number
// slots per template and on each tick deletes the object its slot holds, or creates one.
// Creation errors are ignored (as upstream's churn ignores them); deletion errors are
// recorded.
func (e *Engine) Churn(args ChurnArgs) (*TaskResult, *protocol.Error) {
	if (args.Mode != "create" && args.Mode != "recreate") || args.Number < 0 || args.IntervalMilliseconds <= 0 ||
		(args.Mode == "recreate" && args.Number == 0) || len(args.Objects) == 0 {
		return nil, protocol.NewError(protocol.ErrProtocol, "engine.churn: mode create|recreate, objects, intervalMilliseconds > 0, number >= 0 (> 0 for recreate) required")
	}
	templates := make([]map[string]any, len(args.Objects))
	for i, raw := range args.Objects {
		if err := json.Unmarshal(raw, &templates[i]); err != nil {
			return nil, &protocol.Error{Kind: protocol.ErrInvalidObject, Field: fmt.Sprintf("objects[%d]", i),
				Message: fmt.Sprintf("objects[%d]: %v", i, err)}
		}
	}
	id, t := e.newTask("churn")
	slots := make([][]*churnRef, len(templates))
	for i := range slots {
		slots[i] = make([]*churnRef, max(args.Number, 1))
	}
	count := 0
	tick := func() bool {
		created, deleted := 0, 0
		var errs []string
		for j, tmpl := range templates {
			if args.Mode == "create" {
				if e.churnCreate(tmpl) != nil {
					created++
				}
				continue
			}
			k := count % args.Number
			if ref := slots[j][k]; ref != nil {
				if err := e.churnDelete(ref); err != nil {
					errs = append(errs, fmt.Sprintf("unable to delete %s: %v", ref.name, err))
				} else {
					deleted++
				}
				slots[j][k] = nil
			} else if slots[j][k] = e.churnCreate(tmpl); slots[j][k] != nil {
				created++
			}
		}
		count++
		// one update per tick: a task read between ticks is consistent
		e.update(t, func(t *task) { t.Ticks, t.Created, t.Deleted = t.Ticks+1, t.Created+created, t.Deleted+deleted }, strings.Join(errs, "; "))
		return args.Mode == "recreate" || args.Number == 0 || count < args.Number
	}
	e.every(t, time.Duration(args.IntervalMilliseconds)*time.Millisecond, tick)
	return e.taskResult(id), nil
}

func (e *Engine) churnCreate(tmpl map[string]any) *churnRef {
	obj := make(map[string]any, len(tmpl))
	for k, v := range tmpl {
		obj[k] = v
	}
	md, _ := tmpl["metadata"].(map[string]any)
	meta := make(map[string]any, len(md)+1)
	for k, v := range md {
		meta[k] = v
	}
	if name, _ := meta["name"].(string); name == "" {
		prefix, _ := meta["generateName"].(string)
		meta["name"] = names.SimpleNameGenerator.GenerateName(prefix)
		delete(meta, "generateName")
	}
	obj["metadata"] = meta
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	if _, perr := e.Create(CreateArgs{Objects: []json.RawMessage{raw}}); perr != nil {
		return nil
	}
	kind, _ := obj["kind"].(string)
	ns, _ := meta["namespace"].(string)
	return &churnRef{kind: kind, namespace: ns, name: meta["name"].(string)}
}

func (e *Engine) churnDelete(ref *churnRef) error {
	if ref.kind == "Pod" {
		e.wmu.Lock()
		defer e.wmu.Unlock()
		return e.deletePod(ref.namespace, ref.name)
	}
	if _, perr := e.Delete(DeleteArgs{Refs: []protocol.ObjectRef{{Kind: ref.kind, Namespace: ref.namespace, Name: ref.name}}}); perr != nil {
		return fmt.Errorf("%s", perr.Message)
	}
	return nil
}

// TaskArgs are the arguments of engine.task: wait until background op ID is done, or has
// done at least Ticks ticks (0: until done), or TimeoutSeconds pass.
type TaskArgs struct {
	ID             int     `json:"id"`
	Ticks          int     `json:"ticks"`
	TimeoutSeconds float64 `json:"timeoutSeconds"`
}

// Task waits for a background op and reports it.
func (e *Engine) Task(args TaskArgs) (*TaskResult, *protocol.Error) {
	e.mu.Lock()
	n := len(e.tasks)
	e.mu.Unlock()
	if args.ID < 0 || args.ID >= n {
		return nil, &protocol.Error{Kind: protocol.ErrNotFound, Field: "args.id", Message: fmt.Sprintf("engine.task: no task %d", args.ID)}
	}
	if args.TimeoutSeconds <= 0 {
		return nil, &protocol.Error{Kind: protocol.ErrProtocol, Field: "args.timeoutSeconds", Message: "engine.task: timeoutSeconds must be > 0"}
	}
	begin := time.Now()
	deadline := begin.Add(time.Duration(args.TimeoutSeconds * float64(time.Second)))
	for {
		r := e.taskResult(args.ID)
		if r.Done || (args.Ticks > 0 && r.Ticks >= args.Ticks) || !time.Now().Before(deadline) {
			r.TimedOut = !r.Done && !(args.Ticks > 0 && r.Ticks >= args.Ticks)
			r.Seconds = time.Since(begin).Seconds()
			return r, nil
		}
		select {
		case <-e.ctx.Done():
			return nil, protocol.NewError(protocol.ErrInternal, "engine.task: the engine stopped")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// BarrierArgs are the arguments of engine.barrier: scheduler_perf's barrier over the
// scheduler's pod informer. Namespaces maps each namespace to the pods wanted there.
type BarrierArgs struct {
	Namespaces     map[string]int    `json:"namespaces"`
	LabelSelector  map[string]string `json:"labelSelector"`
	Stage          string            `json:"stage"` // Scheduled | Attempted
	TimeoutSeconds float64           `json:"timeoutSeconds"`
}

// BarrierResult is the reply to engine.barrier: when it timed out, the namespace it waited
// on, what it wanted and got, and a pod not there yet.
type BarrierResult struct {
	TimedOut  bool    `json:"timedOut"`
	Namespace string  `json:"namespace"`
	Want      int     `json:"want"`
	Got       int     `json:"got"`
	Pod       string  `json:"pod"`
	Seconds   float64 `json:"seconds"`
}

// barrierPoll is how often a barrier counts a namespace (upstream polls every second), per
// 1,000 pods listed there: a count walks every pod of the namespace, so big namespaces are
// counted less often (at most once a second) to keep the count's CPU time small beside the
// scheduler's, which the engine measures.
const barrierPoll = 20 * time.Millisecond

func barrierInterval(pods int) time.Duration {
	return min(time.Second, barrierPoll*time.Duration(1+pods/1000))
}

// Barrier waits, namespace by namespace (sorted), until each has its wanted number of pods
// matching the selector scheduled (spec.nodeName set) or, stage Attempted, attempted (a
// PodScheduled condition, as upstream's isAttempted; a bound pod has one).
func (e *Engine) Barrier(args BarrierArgs) (*BarrierResult, *protocol.Error) {
	if args.TimeoutSeconds <= 0 || (args.Stage != "Scheduled" && args.Stage != "Attempted") {
		return nil, protocol.NewError(protocol.ErrProtocol, "engine.barrier: timeoutSeconds > 0 and stage Scheduled|Attempted required")
	}
	begin := time.Now()
	deadline := begin.Add(time.Duration(args.TimeoutSeconds * float64(time.Second)))
	lister := e.factory.Core().V1().Pods().Lister()
	sel := labels.SelectorFromSet(args.LabelSelector)
	done := func(p *v1.Pod) bool {
		if p.Spec.NodeName != "" {
			return true
		}
		if args.Stage == "Attempted" {
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodScheduled {
					return true
				}
			}
		}
		return false
	}
	order := make([]string, 0, len(args.Namespaces))
	for ns := range args.Namespaces {
		order = append(order, ns)
	}
	sort.Strings(order)
	res := &BarrierResult{}
	for _, ns := range order {
		res.Namespace, res.Want = ns, args.Namespaces[ns]
		for res.Want > 0 {
			pods, err := lister.Pods(ns).List(sel)
			if err != nil {
				return nil, protocol.NewError(protocol.ErrInternal, err.Error())
			}
			res.Got, res.Pod = 0, ""
			for _, p := range pods {
				if done(p) {
					res.Got++
				} else if res.Pod == "" || p.Name < res.Pod {
					res.Pod = p.Name
				}
			}
			if res.Got >= res.Want {
				break
			}
			if !time.Now().Before(deadline) {
				res.TimedOut = true
				res.Seconds = time.Since(begin).Seconds()
				return res, nil
			}
			select {
			case <-e.ctx.Done():
				return nil, protocol.NewError(protocol.ErrInternal, "engine.barrier: the engine stopped")
			case <-time.After(barrierInterval(len(pods))):
			}
		}
	}
	res.Seconds = time.Since(begin).Seconds()
	return res, nil
}
