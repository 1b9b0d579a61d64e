package world

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Probes is a second framework of a profile, built for looking: the same profile, the same
// in-tree plugins and arguments, the same snapshot, listers and nominator as the scheduler's
// framework, but its API writes go to a sandbox clientset (recorded, answered, never
// applied) and DefaultPreemption records its evictions instead of making them, and runs
// them synchronously (the choice of node and victims does not depend on that).
//
// PostFilter runs on it, so preemption can be evaluated without changing the cluster; and
// its PreFilter plugin instances are kept (PreFilter, in the profile's order) so that each
// plugin's own answer can be reported (the framework returns only the merged result).
type Probes struct {
	Framework framework.Framework
	PreFilter []PreFilterPlugin

	mu      sync.Mutex
	victims []Eviction
	sandbox *fake.Clientset
}

// Eviction is one victim the probe's preemption would have evicted.
type Eviction struct {
	Pod  *v1.Pod
	Node string
}

func newProbes(ctx context.Context, real framework.Framework, prof config.KubeSchedulerProfile,
	factory informers.SharedInformerFactory, nominator PodNominator) (*Probes, error) {
	p := &Probes{sandbox: fake.NewClientset()}
	instances := map[string]Plugin{}
	registry := frameworkruntime.Registry{}
	for name, newPlugin := range frameworkplugins.NewInTreeRegistry() {
		registry[name] = func(ctx context.Context, args runtime.Object, h Handle) (Plugin, error) {
			pl, err := newPlugin(ctx, args, probeHandle(name, h))
			if err == nil {
				instances[name] = pl
			}
			return pl, err
		}
	}
	registry[defaultpreemption.Name] = func(ctx context.Context, args runtime.Object, h Handle) (Plugin, error) {
		fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
		fts.EnableAsyncPreemption = false
		pl, err := defaultpreemption.New(ctx, args, h, fts)
		if err != nil {
			return nil, err
		}
		p.recordEvictions(pl)
		return pl, nil
	}
	opts := append([]frameworkruntime.Option{
		frameworkruntime.WithClientSet(p.sandbox),
		frameworkruntime.WithEventRecorder(&events.FakeRecorder{}),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSharedDRAManager(real.SharedDRAManager()),
		frameworkruntime.WithSnapshotSharedLister(real.SnapshotSharedLister()),
		frameworkruntime.WithPodNominator(nominator),
		frameworkruntime.WithPodActivator(noActivation{}),
		frameworkruntime.WithParallelism(1),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithLogger(klog.FromContext(ctx)),
	}, probeOptions(real)...)
	fw, err := frameworkruntime.NewFramework(ctx, registry, &prof, opts...)
	if err != nil {
		return nil, fmt.Errorf("building the probe framework of profile %q: %w", prof.SchedulerName, err)
	}
	p.Framework = fw
	for _, e := range fw.ListPlugins().PreFilter.Enabled {
		pl, ok := instances[e.Name].(PreFilterPlugin)
		if !ok {
			return nil, fmt.Errorf("profile %q: PreFilter plugin %q is not an in-tree PreFilter plugin", prof.SchedulerName, e.Name)
		}
		p.PreFilter = append(p.PreFilter, pl)
	}
	return p, nil
}

// noActivation: the probe moves no pod in the scheduler's queue.
type noActivation struct{}

func (noActivation) Activate(klog.Logger, map[string]*v1.Pod) {}

func (p *Probes) recordEviction(victim *v1.Pod, node string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.victims = append(p.victims, Eviction{Pod: victim, Node: node})
}

// StartPostFilter forgets what an earlier PostFilter recorded.
func (p *Probes) StartPostFilter() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.victims = nil
	p.sandbox.ClearActions()
}

// Evictions returns the victims recorded since StartPostFilter.
func (p *Probes) Evictions() []Eviction {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Eviction(nil), p.victims...)
}

// SandboxWrites returns the API writes the probe framework attempted since StartPostFilter
// (they were answered by the sandbox, not applied).
func (p *Probes) SandboxWrites() []clienttesting.Action {
	var out []clienttesting.Action
	for _, a := range p.sandbox.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		out = append(out, a)
	}
	return out
}
