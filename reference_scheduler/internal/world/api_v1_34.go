//go:build !k8s_1_37

package world

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// The scheduler framework's plugin-facing types, where v1.34 declares them
// (k8s.io/kubernetes/pkg/scheduler/framework); v1.37 moved them to k8s.io/kube-scheduler.
type (
	Plugin          = framework.Plugin
	PreFilterPlugin = framework.PreFilterPlugin
	Handle          = framework.Handle
	PodNominator    = framework.PodNominator
	Diagnosis       = framework.Diagnosis
	SharedLister    = framework.SharedLister
	PreFilterResult = framework.PreFilterResult
)

// ModeOverride: a PostFilter result that sets the nominated node.
const ModeOverride = framework.ModeOverride

// recordEvictions makes DefaultPreemption record its victims instead of evicting them (v1.34:
// the evaluator's PreemptPod).
func (p *Probes) recordEvictions(pl *defaultpreemption.DefaultPreemption) {
	pl.Evaluator.PreemptPod = func(_ context.Context, c preemption.Candidate, _, victim *v1.Pod, _ string) error {
		p.recordEviction(victim, c.Name())
		return nil
	}
}

// NewInformerFactory is the scheduler's informer factory over client, without resync.
func NewInformerFactory(client clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(client, 0)
}

// FakeRecorders is the scheduler's recorder factory: every profile's events are dropped.
func FakeRecorders(string) events.EventRecorder { return &events.FakeRecorder{} }

// probeOptions: what else the probe framework shares with the scheduler's (v1.34: nothing).
func probeOptions(framework.Framework) []frameworkruntime.Option { return nil }

// probeHandle is the handle a probe plugin instance gets (v1.34: the framework's own).
func probeHandle(_ string, h Handle) Handle { return h }

// releasePoints: v1.34 has no extension points beyond the pod's.
func releasePoints(*config.Plugins) map[string]config.PluginSet { return nil }
