// Package world holds the cluster the real kube-scheduler library sees: a fake clientset's
// object tracker as the store of record, the scheduler built by scheduler.New over it, and
// the listers, cache and queue kept in step with every write, synchronously.
//
// No informer is started: each write updates the tracker, then the informers' indexers (what
// the plugins' listers read), then the scheduler's cache and queue the way kube-scheduler's
// event handlers route an object (assigned pods to the cache, pending pods of a known
// profile to the queue, nodes to the cache); plugins' own handlers on the storage kinds'
// informers (VolumeBinding's assume caches) are called too (handlers.go). A request's effects
// are therefore complete when its reply is written, and nothing changes between requests.
package world

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/schedperf/reference_scheduler/internal/protocol"
)

// World is the reference cluster and the scheduler over it.
type World struct {
	ctx      context.Context
	cancel   context.CancelFunc
	logger   klog.Logger
	client   *fake.Clientset
	informer informers.SharedInformerFactory
	sched    *scheduler.Scheduler
	cfg      *config.KubeSchedulerConfiguration
	probes   map[string]*Probes
	gates    map[string]bool
	clock    *logicalClock
	assumed  map[string]*v1.Pod          // namespace/name -> the pod as assumed in the cache (Assume)
	handlers map[string]*handlerRecorder // kind -> its informer, whose handlers sync calls
}

// New returns an unconfigured world; Configure (or the first write) builds the scheduler.
func New() *World {
	ctx, cancel := context.WithCancel(context.Background())
	return &World{ctx: ctx, cancel: cancel, logger: klog.FromContext(ctx), clock: newLogicalClock()}
}

// Close stops the scheduler's background goroutines.
func (w *World) Close() { w.cancel() }

// Configured reports whether the scheduler has been built.
func (w *World) Configured() bool { return w.sched != nil }

// Configure builds the scheduler from a configuration text (empty: the defaults). Only
// before any object was written: the cluster starts with the four namespaces every
// API server creates.
func (w *World) Configure(text string, gates map[string]bool) (*protocol.ConfigResult, *protocol.Error) {
	if w.sched != nil && w.objectsWritten() {
		return nil, protocol.NewError(protocol.ErrConflict,
			"config: objects were already written; send config first (or start a new process)")
	}
	if err := w.setFeatureGates(gates); err != nil {
		return nil, err
	}
	cfg, perr := DecodeConfig(text)
	if perr != nil {
		return nil, perr
	}
	if w.sched != nil {
		w.cancel()
		w.ctx, w.cancel = context.WithCancel(context.Background())
	}
	client := newClient()
	factory := NewInformerFactory(client)
	handlers, err := recordHandlers(factory, client)
	if err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	sched, err := scheduler.New(w.ctx, client, factory, nil, FakeRecorders,
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithParallelism(1),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
	)
	if err != nil {
		return nil, &protocol.Error{Kind: protocol.ErrInvalidConfig, Message: err.Error()}
	}
	probes := make(map[string]*Probes, len(sched.Profiles))
	for _, prof := range cfg.Profiles {
		p, err := newProbes(w.ctx, sched.Profiles[prof.SchedulerName], prof, factory, sched.SchedulingQueue)
		if err != nil {
			return nil, &protocol.Error{Kind: protocol.ErrInvalidConfig, Message: err.Error()}
		}
		probes[prof.SchedulerName] = p
	}
	w.client, w.informer, w.sched, w.cfg, w.probes, w.handlers = client, factory, sched, cfg, probes, handlers
	w.clock = newLogicalClock()
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		obj := &v1.Namespace{}
		obj.Name = ns
		if _, perr := w.write(obj, false); perr != nil {
			return nil, perr
		}
	}
	w.clock.writes = 0
	return describe(cfg, sched), nil
}

func (w *World) ensureConfigured() *protocol.Error {
	if w.sched != nil {
		return nil
	}
	_, err := w.Configure("", nil)
	return err
}

// objectsWritten: anything beyond the namespaces Configure creates.
func (w *World) objectsWritten() bool { return w.clock.writes > 0 }

func describe(cfg *config.KubeSchedulerConfiguration, sched *scheduler.Scheduler) *protocol.ConfigResult {
	out := &protocol.ConfigResult{}
	for _, prof := range cfg.Profiles {
		fw := sched.Profiles[prof.SchedulerName]
		pl := fw.ListPlugins()
		points := map[string]config.PluginSet{
			"PreEnqueue": pl.PreEnqueue, "QueueSort": pl.QueueSort, "PreFilter": pl.PreFilter,
			"Filter": pl.Filter, "PostFilter": pl.PostFilter, "PreScore": pl.PreScore,
			"Score": pl.Score, "Reserve": pl.Reserve, "Permit": pl.Permit, "PreBind": pl.PreBind,
			"Bind": pl.Bind, "PostBind": pl.PostBind,
		}
		for point, set := range releasePoints(pl) {
			points[point] = set
		}
		p := protocol.Profile{SchedulerName: prof.SchedulerName,
			PercentageOfNodesToScore: fw.PercentageOfNodesToScore(),
			Plugins:                  map[string][]string{}, ScoreWeights: map[string]int32{}}
		for point, set := range points {
			names := make([]string, 0, len(set.Enabled))
			for _, e := range set.Enabled {
				names = append(names, e.Name)
			}
			p.Plugins[point] = names
		}
		for _, e := range pl.Score.Enabled {
			p.ScoreWeights[e.Name] = e.Weight
		}
		out.Profiles = append(out.Profiles, p)
	}
	sort.Slice(out.Profiles, func(i, j int) bool { return out.Profiles[i].SchedulerName < out.Profiles[j].SchedulerName })
	return out
}

// Framework is the scheduler's framework for a profile, with the probes built beside it.
func (w *World) Framework(schedulerName string) (framework.Framework, *Probes, bool) {
	fw, ok := w.sched.Profiles[schedulerName]
	if !ok {
		return nil, nil, false
	}
	return fw, w.probes[schedulerName], true
}

// Snapshot brings the framework's shared snapshot up to date with the cache, as a
// scheduling cycle does first, and returns it.
func (w *World) Snapshot(fw framework.Framework) (*internalcache.Snapshot, error) {
	snap, ok := fw.SnapshotSharedLister().(*internalcache.Snapshot)
	if !ok {
		return nil, fmt.Errorf("the framework's shared lister is a %T, not the scheduler's snapshot", fw.SnapshotSharedLister())
	}
	if err := w.sched.Cache.UpdateSnapshot(w.logger, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// Pod returns a pod as the scheduler's pod lister sees it (terminal pods are not seen).
func (w *World) Pod(namespace, name string) (*v1.Pod, *protocol.Error) {
	if err := w.ensureConfigured(); err != nil {
		return nil, err
	}
	pod, err := w.informer.Core().V1().Pods().Lister().Pods(namespace).Get(name)
	if err != nil {
		return nil, protocol.NewError(protocol.ErrNotFound, fmt.Sprintf("pod %s/%s not found", namespace, name))
	}
	return pod, nil
}

// Context is the world's context (cancelled by Close).
func (w *World) Context() context.Context { return w.ctx }

// Logger is the world's logger.
func (w *World) Logger() klog.Logger { return w.logger }
