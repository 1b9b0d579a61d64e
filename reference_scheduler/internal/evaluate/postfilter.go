package evaluate

import (
	"sort"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/schedperf/reference_scheduler/internal/protocol"
	"github.com/schedperf/reference_scheduler/internal/world"
)

// postFilter runs what the scheduling cycle runs when no node fits: PostFilter, on the probe
// framework (whose evictions and API writes are recorded, not made), then the FitError
// message with PostFilter's message in it.
func (c *cycle) postFilter(state fwk.CycleState, diagnosis *framework.Diagnosis) {
	c.out.Outcome = "Unschedulable"
	fitErr := &framework.FitError{Pod: c.pod, NumAllNodes: len(c.all), Diagnosis: *diagnosis}
	if c.member || !c.fw.HasPostFilterPlugins() {
		c.out.Message = fitErr.Error()
		return
	}
	c.probes.StartPostFilter()
	result, s := c.probes.Framework.RunPostFilterPlugins(c.ctx, state, c.pod, diagnosis.NodeToStatus)
	pf := &protocol.PostFilter{Status: statusOf(s), Victims: []protocol.Victim{}, ClearedNominations: []protocol.PodRef{}}
	if result != nil && result.NominatingInfo != nil && result.Mode() == world.ModeOverride {
		node := result.NominatedNodeName
		pf.NominatedNode = &node
	}
	for _, e := range c.probes.Evictions() {
		pf.Victims = append(pf.Victims, protocol.Victim{Namespace: e.Pod.Namespace, Name: e.Pod.Name, UID: string(e.Pod.UID), Node: e.Node})
	}
	sort.Slice(pf.Victims, func(i, j int) bool {
		a, b := pf.Victims[i], pf.Victims[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	for _, a := range c.probes.SandboxWrites() {
		if a.GetVerb() == "patch" && a.GetResource().Resource == "pods" {
			if named, ok := a.(interface{ GetName() string }); ok {
				pf.ClearedNominations = append(pf.ClearedNominations, protocol.PodRef{Namespace: a.GetNamespace(), Name: named.GetName()})
			}
		}
	}
	// the cycle fails as Unschedulable whatever PostFilter answered (an Error is only logged)
	c.out.PostFilter = pf
	diagnosis.PostFilterMsg = s.Message()
	fitErr.Diagnosis = *diagnosis
	c.out.Message = fitErr.Error()
}
