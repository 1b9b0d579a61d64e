//go:build k8s_1_37

package world

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// The scheduler framework's plugin-facing types, where v1.37 declares them
// (k8s.io/kube-scheduler/framework).
type (
	Plugin          = fwk.Plugin
	PreFilterPlugin = fwk.PreFilterPlugin
	Handle          = fwk.Handle
	PodNominator    = fwk.PodNominator
	Diagnosis       = framework.Diagnosis
	SharedLister    = fwk.SharedLister
	PreFilterResult = fwk.PreFilterResult
)

// ModeOverride: a PostFilter result that sets the nominated node.
const ModeOverride = fwk.ModeOverride

// recordEvictions makes DefaultPreemption record its victims instead of evicting them (v1.37:
// the executor's PreemptPod; false: the victim was not preempted in memory only).
func (p *Probes) recordEvictions(pl *defaultpreemption.DefaultPreemption) {
	pl.Executor.PreemptPod = func(_ context.Context, c preemption.Candidate, _ preemption.ExecutorPreemptor, victim *v1.Pod, _ string) (bool, error) {
		p.recordEviction(victim, c.Name())
		return false, nil
	}
}

// NewInformerFactory is the scheduler's informer factory over client, without resync (no informer name).
func NewInformerFactory(client clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(client, 0, nil)
}

// FakeRecorders is the scheduler's recorder factory: every profile's events are dropped.
func FakeRecorders(string) events.EventRecorderLogger { return &events.FakeRecorder{} }

// probeOptions: what else the probe framework shares with the scheduler's (v1.37: the mutable
// snapshot, whose pod groups preemption reads, the CSI manager, through which NodeVolumeLimits'
// Filter reads CSINodes (nil, that Filter panics in a preemption dry run), and the pod-group
// manager).
func probeOptions(real framework.Framework) []frameworkruntime.Option {
	opts := []frameworkruntime.Option{frameworkruntime.WithMutableSnapshotLister(real.MutableSnapshotSharedLister()),
		frameworkruntime.WithSharedCSIManager(real.SharedCSIManager())}
	if m, ok := real.(interface{ PodGroupManager() fwk.PodGroupManager }); ok {
		opts = append(opts, frameworkruntime.WithPodGroupManager(m.PodGroupManager()))
	}
	return opts
}

// probeHandle is the handle a probe plugin instance gets. v1.37's DynamicResources adds an
// indexer named after the profile to the shared pod informer, which a second instance of the
// same profile cannot add again: the probe's instance sees its profile under another name.
func probeHandle(plugin string, h Handle) Handle {
	if plugin != "DynamicResources" {
		return h
	}
	return renamedProfile{h}
}

type renamedProfile struct{ Handle }

func (r renamedProfile) ProfileName() string { return r.Handle.ProfileName() + "-probe" }

// releasePoints: the extension points of pod groups v1.37 adds (placements, group preemption).
func releasePoints(pl *config.Plugins) map[string]config.PluginSet {
	return map[string]config.PluginSet{
		"PlacementGenerate": pl.PlacementGenerate, "PlacementScore": pl.PlacementScore,
		"PodGroupPostFilter": pl.PodGroupPostFilter,
	}
}
