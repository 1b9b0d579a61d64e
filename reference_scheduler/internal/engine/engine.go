// Package engine runs the real kube-scheduler loop — its scheduling queue, its goroutines, its
// informers — over client-go's fake clientset, for schedperf's side-by-side engine
// (`schedperf run --engine kube-scheduler`). Objects are created through the clientset as
// scheduler_perf's createNodes/createPods do; the informers deliver them to the scheduler, which
// schedules and binds them on its own. The engine records when each pod was created and bound,
// and the process's CPU time, so that schedperf computes throughput and latencies as it does for
// its own scheduler.
//
// Unlike the world package, nothing here is synchronous with requests: a create returns when
// the objects are in the tracker; the scheduler works meanwhile.
package engine

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"

	"github.com/schedperf/reference_scheduler/internal/protocol"
	"github.com/schedperf/reference_scheduler/internal/world"
)

// DefaultWatchBuffer is the fake watchers' channel size: the fake clientset's watchers panic
// ("channel full") when a consumer falls behind by more than this many events.
const DefaultWatchBuffer = 1 << 18

// queueingHintsGate is locked to true from v1.34 on (and gone by v1.37).
const queueingHintsGate = "SchedulerQueueingHints"

// queueingHintsOffEmulation is the release scheduler_perf emulates for a workload that sets
// SchedulerQueueingHints: false: v1.34's scheduler_perf sets the feature gates' emulation
// version to 1.33, where the gate is still settable, before it sets the workload's gates.
var queueingHintsOffEmulation = version.MajorMinor(1, 33)

// emulateForQueueingHintsOff does what v1.34's scheduler_perf does for a workload that turns
// queueing hints off: every gate then takes its v1.33 default unless the workload sets it. A
// build whose gates do not have SchedulerQueueingHints (v1.37) is left alone, and SetFromMap
// reports the gate as unknown.
func emulateForQueueingHintsOff(gates map[string]bool) *protocol.Error {
	on, set := gates[queueingHintsGate]
	if !set || on {
		return nil
	}
	if _, known := utilfeature.DefaultMutableFeatureGate.GetAll()[queueingHintsGate]; !known {
		return nil
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetEmulationVersion(queueingHintsOffEmulation); err != nil {
		return &protocol.Error{Kind: protocol.ErrUnsupported, Field: "featureGates",
			Message: fmt.Sprintf("featureGates: %s=false needs emulation version %s: %v",
				queueingHintsGate, queueingHintsOffEmulation, err)}
	}
	return nil
}

// StartArgs are the arguments of engine.start.
type StartArgs struct {
	Config       string          `json:"config"`       // KubeSchedulerConfiguration text; empty: defaults
	FeatureGates map[string]bool `json:"featureGates"` // kube feature gates
	GOMAXPROCS   int             `json:"gomaxprocs"`   // 0: leave as is
	Parallelism  int32           `json:"parallelism"`  // 0: the configuration's
	WatchBuffer  int32           `json:"watchBuffer"`  // 0: DefaultWatchBuffer
}

// StartResult is the reply to engine.start.
type StartResult struct {
	GOMAXPROCS               int                `json:"gomaxprocs"`
	NumCPU                   int                `json:"numCPU"`
	Parallelism              int32              `json:"parallelism"`
	PercentageOfNodesToScore *int32             `json:"percentageOfNodesToScore"`
	Profiles                 []protocol.Profile `json:"profiles"`
	Informers                int                `json:"informers"`
	StartSeconds             float64            `json:"startSeconds"`
	// EmulationVersion is the feature gates' emulation version: the build's own release, or
	// 1.33 for a workload that turns SchedulerQueueingHints off (as scheduler_perf does).
	EmulationVersion string `json:"emulationVersion"`
}

// podTimes is when a pod was created and bound (seconds since the engine started; bound 0:
// not bound yet).
type podTimes struct {
	created     float64
	bound       float64
	node        string
	deleted     bool // removed from the store (by an op, or the scheduler's preemption)
	terminating bool // given a deletionTimestamp (finalizers, or a bound pod's grace period)
}

// Engine is one running scheduler over a fake clientset.
type Engine struct {
	ctx     context.Context
	cancel  context.CancelFunc
	client  *fake.Clientset
	admit   *world.Admitter
	sched   *scheduler.Scheduler
	factory informers.SharedInformerFactory // the scheduler's informers (its pod lister)
	started time.Time

	mu      sync.Mutex
	pods    map[string]map[string]*podTimes // namespace -> name -> times
	bound   map[string]int                  // namespace -> pods bound
	total   int
	nodes   int           // nodes created (engine.create waits until the cache has them)
	changed chan struct{} // receives (without blocking) after every bind

	wmu    sync.Mutex // held by every write (the admitter's clock, nodes) and background op
	tasks  []*task    // background ops (churn, paced deletePods), by id
	errors []string   // what background ops could not do, for engine.stats
}

// Start builds the scheduler from the configuration, starts its informers, waits for them to
// list and watch, and starts the scheduling loop.
func Start(parent context.Context, args StartArgs) (*Engine, *StartResult, *protocol.Error) {
	begin := time.Now()
	if args.GOMAXPROCS < 0 || args.Parallelism < 0 || args.WatchBuffer < 0 {
		return nil, nil, protocol.NewError(protocol.ErrProtocol, "engine.start: gomaxprocs, parallelism and watchBuffer must be >= 0")
	}
	if args.GOMAXPROCS > 0 {
		runtime.GOMAXPROCS(args.GOMAXPROCS)
	}
	watch.DefaultChanSize = DefaultWatchBuffer
	if args.WatchBuffer > 0 {
		watch.DefaultChanSize = args.WatchBuffer
	}
	if len(args.FeatureGates) > 0 {
		if err := emulateForQueueingHintsOff(args.FeatureGates); err != nil {
			return nil, nil, err
		}
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(args.FeatureGates); err != nil {
			kind := protocol.ErrInvalidConfig
			if msg := err.Error(); strings.Contains(msg, "is locked to") || strings.Contains(msg, "unrecognized feature gate") {
				kind = protocol.ErrUnsupported // a gate v1.34 locks, or does not have
			}
			return nil, nil, &protocol.Error{Kind: kind, Field: "featureGates", Message: "featureGates: " + err.Error()}
		}
	}
	cfg, perr := world.DecodeConfig(args.Config)
	if perr != nil {
		return nil, nil, perr
	}
	parallelism := cfg.Parallelism
	if args.Parallelism > 0 {
		parallelism = args.Parallelism
	}
	ctx, cancel := context.WithCancel(parent)
	e := &Engine{ctx: ctx, cancel: cancel, client: world.NewEngineClient(),
		pods: map[string]map[string]*podTimes{}, bound: map[string]int{}, changed: make(chan struct{}, 1)}
	e.admit = world.NewAdmitter(e.client)
	e.recordBindings()
	e.recordPodDeletions()
	watches := e.countWatches()
	factory := world.NewInformerFactory(e.client)
	sched, err := scheduler.New(ctx, e.client, factory, nil, world.FakeRecorders,
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithParallelism(parallelism),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
	)
	if err != nil {
		cancel()
		return nil, nil, &protocol.Error{Kind: protocol.ErrInvalidConfig, Message: err.Error()}
	}
	e.sched = sched
	e.factory = factory
	if perr := e.createNamespaces(); perr != nil {
		cancel()
		return nil, nil, perr
	}
	factory.Start(ctx.Done())
	synced := factory.WaitForCacheSync(ctx.Done())
	for typ, ok := range synced {
		if !ok {
			cancel()
			return nil, nil, protocol.NewError(protocol.ErrInternal, fmt.Sprintf("engine.start: informer for %v did not sync", typ))
		}
	}
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		cancel()
		return nil, nil, protocol.NewError(protocol.ErrInternal, "engine.start: event handlers did not sync: "+err.Error())
	}
	// the fake tracker sends a watcher only what happens after its Watch call: wait until
	// every informer watches, or objects created now could be missed
	if perr := waitFor(ctx, 30*time.Second, func() bool { return watches() >= len(synced) }); perr != nil {
		cancel()
		return nil, nil, protocol.NewError(protocol.ErrInternal, fmt.Sprintf("engine.start: %d informers synced, %d watch", len(synced), watches()))
	}
	go sched.Run(klog.NewContext(ctx, klog.FromContext(ctx)))
	e.started = time.Now()
	res := &StartResult{GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(), Parallelism: parallelism,
		PercentageOfNodesToScore: cfg.PercentageOfNodesToScore, Informers: len(synced),
		StartSeconds:     time.Since(begin).Seconds(),
		EmulationVersion: utilfeature.DefaultMutableFeatureGate.EmulationVersion().String()}
	res.Profiles = world.Describe(cfg, sched).Profiles
	return e, res, nil
}

// Stop ends the scheduling loop and the informers.
func (e *Engine) Stop() { e.cancel() }

func waitFor(ctx context.Context, limit time.Duration, cond func() bool) *protocol.Error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return protocol.NewError(protocol.ErrInternal, "timed out")
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// countWatches counts the watches the informers open.
func (e *Engine) countWatches() func() int {
	var mu sync.Mutex
	n := 0
	e.client.PrependWatchReactor("*", func(clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		n++
		mu.Unlock()
		return false, nil, nil
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// recordBindings wraps the clientset's reactors: a pods/binding creation that succeeds
// records when the pod was bound.
func (e *Engine) recordBindings() {
	next := append([]clienttesting.Reactor(nil), e.client.ReactionChain...)
	e.client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, k8sruntime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		for _, r := range next {
			if !r.Handles(action) {
				continue
			}
			handled, ret, err := r.React(action)
			if !handled {
				continue
			}
			if err == nil {
				if b, ok := action.(clienttesting.CreateAction).GetObject().(*v1.Binding); ok {
					e.noteBound(action.GetNamespace(), b.Name, b.Target.Name)
				}
			}
			return true, ret, err
		}
		return false, nil, nil
	})
}

// recordPodDeletions notes every pod removed from the store, whoever deletes it (an op, or
// the scheduler evicting a preemption victim).
func (e *Engine) recordPodDeletions() {
	tracker := e.client.Tracker()
	e.client.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, k8sruntime.Object, error) {
		if action.GetSubresource() == "" {
			name := action.(clienttesting.DeleteAction).GetName()
			if _, err := tracker.Get(action.GetResource(), action.GetNamespace(), name); err == nil {
				e.notePodGone(action.GetNamespace(), name, true)
			}
		}
		return false, nil, nil
	})
}

// notePodGone marks a pod deleted (removed) or terminating (deletionTimestamp set).
func (e *Engine) notePodGone(namespace, name string, removed bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.pods[namespace][name]; p != nil {
		if removed {
			p.deleted = true
		} else {
			p.terminating = true
		}
	}
}

func (e *Engine) since() float64 { return time.Since(e.started).Seconds() }

func (e *Engine) noteBound(namespace, name, node string) {
	t := e.since()
	e.mu.Lock()
	byName := e.pods[namespace]
	if byName == nil {
		byName = map[string]*podTimes{}
		e.pods[namespace] = byName
	}
	p := byName[name]
	if p == nil {
		p = &podTimes{created: t}
		byName[name] = p
	}
	if p.bound == 0 {
		p.bound, p.node = t, node
		e.bound[namespace]++
		e.total++
	}
	e.mu.Unlock()
	select {
	case e.changed <- struct{}{}:
	default:
	}
}

// createNamespaces creates the four namespaces every API server has.
func (e *Engine) createNamespaces() *protocol.Error {
	gvr, _, _ := world.KindResource("Namespace")
	for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		ns := &v1.Namespace{}
		ns.Name = name
		ns.Labels = map[string]string{v1.LabelMetadataName: name}
		ns.Status.Phase = v1.NamespaceActive
		if _, err := e.client.Invokes(clienttesting.NewRootCreateAction(gvr, ns), nil); err != nil {
			return protocol.NewError(protocol.ErrInternal, err.Error())
		}
	}
	return nil
}

// cpuSeconds is the process's user + system CPU time, every thread.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
