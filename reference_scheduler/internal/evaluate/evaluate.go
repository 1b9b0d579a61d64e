// Package evaluate runs one scheduling cycle's decision steps for a pending pod against the
// current snapshot, without side effects, and reports every step: PreFilter per plugin,
// Filter on every node, PreScore, Score per plugin per node, and PostFilter (preemption)
// when no node fits.
//
// The steps are the framework's own (RunPreFilterPlugins, RunFilterPluginsWithNominatedPods,
// RunPreScorePlugins, RunScorePlugins of the profile's framework); what differs from a
// scheduling cycle is only what is left out: the search does not stop after
// numFeasibleNodesToFind nodes (every node is filtered), no host is picked among the best
// (all of them are returned), and nothing is assumed, reserved, bound or evicted.
package evaluate

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/schedperf/reference_scheduler/internal/protocol"
	"github.com/schedperf/reference_scheduler/internal/world"
)

// Options narrow an evaluation to what a pod-group cycle evaluates for one member.
type Options struct {
	// Nodes, when not nil, are the only nodes considered (a placement's nodes; the snapshot's
	// order is kept, and the node count of the FitError message is theirs).
	Nodes []string
	// Member: the pod is evaluated as a member of its pod group is, without PostFilter
	// (the pod-group cycle runs none for a single member).
	Member bool
}

// Run evaluates the pending pod namespace/name.
func Run(w *world.World, namespace, name string, opts Options) (*protocol.Evaluation, *protocol.Error) {
	if namespace == "" {
		namespace = "default"
	}
	pod, perr := w.Pod(namespace, name)
	if perr != nil {
		return nil, perr
	}
	if pod.Spec.NodeName != "" {
		return nil, protocol.NewError(protocol.ErrConflict, fmt.Sprintf("pod %s/%s is bound to %s: only a pending pod can be evaluated", namespace, name, pod.Spec.NodeName))
	}
	fw, probes, ok := w.Framework(pod.Spec.SchedulerName)
	if !ok {
		return nil, protocol.NewError(protocol.ErrConflict, fmt.Sprintf("pod %s/%s: spec.schedulerName %q is not a profile of the configuration", namespace, name, pod.Spec.SchedulerName))
	}
	snap, err := w.Snapshot(fw)
	if err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	all, err := snap.NodeInfos().List()
	if err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	if opts.Nodes != nil {
		all, perr = placementNodes(all, opts.Nodes)
		if perr != nil {
			return nil, perr
		}
	}
	c := &cycle{ctx: w.Context(), fw: fw, probes: probes, pod: pod.DeepCopy(), all: all, snap: snap, member: opts.Member}
	return c.run(), nil
}

// placementNodes keeps the nodes named, in the snapshot's order; a name of no node is an
// error.
func placementNodes(all []fwk.NodeInfo, names []string) ([]fwk.NodeInfo, *protocol.Error) {
	wanted := sets.New(names...)
	out := make([]fwk.NodeInfo, 0, len(names))
	for _, n := range all {
		if wanted.Has(n.Node().Name) {
			out = append(out, n)
			wanted.Delete(n.Node().Name)
		}
	}
	if wanted.Len() > 0 {
		return nil, protocol.NewError(protocol.ErrNotFound, fmt.Sprintf("evaluate: nodes not found: %v", sets.List(wanted)))
	}
	return out, nil
}

type cycle struct {
	ctx    context.Context
	fw     framework.Framework
	probes *world.Probes
	pod    *v1.Pod
	all    []fwk.NodeInfo
	snap   world.SharedLister
	member bool // a pod-group member: no PostFilter
	out    protocol.Evaluation
}

func statusOf(s *fwk.Status) protocol.Status {
	if s == nil {
		return protocol.Status{Code: fwk.Success.String(), Reasons: []string{}}
	}
	reasons := s.Reasons()
	if reasons == nil {
		reasons = []string{}
	}
	return protocol.Status{Code: s.Code().String(), Plugin: s.Plugin(), Reasons: reasons}
}

func sortedNames(set sets.Set[string]) []string {
	if set == nil {
		return nil
	}
	out := sets.List(set)
	if out == nil {
		out = []string{}
	}
	return out
}

func (c *cycle) run() *protocol.Evaluation {
	out := &c.out
	out.Pod = protocol.PodRef{Namespace: c.pod.Namespace, Name: c.pod.Name}
	out.Profile = c.fw.ProfileName()
	out.Nodes = make([]string, 0, len(c.all))
	for _, n := range c.all {
		out.Nodes = append(out.Nodes, n.Node().Name)
	}
	if len(c.all) == 0 {
		out.Outcome, out.Message = "Unschedulable", "no nodes available to schedule pods"
		out.PreFilter = protocol.PreFilter{Plugins: []protocol.PluginPreFilter{}, Status: statusOf(nil), Skipped: []string{}}
		return out
	}
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	out.PreFilter.Plugins = c.probePreFilter()

	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	preRes, s, unschedulable := c.fw.RunPreFilterPlugins(c.ctx, state, c.pod)
	diagnosis.UnschedulablePlugins = unschedulable
	out.PreFilter.Status = statusOf(s)
	out.PreFilter.Skipped = sortedNames(state.GetSkipFilterPlugins())
	if out.PreFilter.Skipped == nil {
		out.PreFilter.Skipped = []string{}
	}
	if !preRes.AllNodes() {
		out.PreFilter.NodeNames = sortedNames(preRes.NodeNames)
	}
	if !s.IsSuccess() {
		if !s.IsRejected() {
			out.Outcome, out.Message = "Error", s.AsError().Error()
			return out
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(s)
		diagnosis.PreFilterMsg = s.Message()
		diagnosis.AddPluginStatus(s)
		c.postFilter(state, &diagnosis)
		return out
	}
	nodes := c.all
	if !preRes.AllNodes() {
		nodes = make([]fwk.NodeInfo, 0, len(preRes.NodeNames))
		for _, n := range c.all { // the snapshot's order (the scheduler visits a map's)
			if preRes.NodeNames.Has(n.Node().Name) {
				nodes = append(nodes, n)
			}
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedulable))))
	}
	feasible, filterErr := c.filter(state, nodes, &diagnosis)
	if filterErr != nil {
		out.Outcome, out.Message = "Error", filterErr.Error()
		return out
	}
	if len(feasible) == 0 {
		c.postFilter(state, &diagnosis)
		return out
	}
	c.score(state, feasible)
	return out
}

// probePreFilter asks each PreFilter plugin (probe instances) in order, on a state of its
// own, stopping where the framework stops: at an error, at UnschedulableAndUnresolvable, or
// when the merged node set becomes empty.
func (c *cycle) probePreFilter() []protocol.PluginPreFilter {
	state := framework.NewCycleState()
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	out := []protocol.PluginPreFilter{}
	var merged *world.PreFilterResult
	for _, pl := range c.probes.PreFilter {
		res, s := pl.PreFilter(c.ctx, state, c.pod, c.all)
		st := statusOf(s)
		entry := protocol.PluginPreFilter{Plugin: pl.Name(), Code: st.Code, Reasons: st.Reasons}
		if s.IsSuccess() && !res.AllNodes() {
			entry.NodeNames = sortedNames(res.NodeNames)
		}
		out = append(out, entry)
		if s.IsSkip() || s.Code() == fwk.Unschedulable {
			continue
		}
		if !s.IsSuccess() {
			break
		}
		merged = merged.Merge(res)
		if !merged.AllNodes() && len(merged.NodeNames) == 0 {
			break
		}
	}
	return out
}

// filter runs the Filter plugins (with nominated pods, as the scheduler does) on every node.
func (c *cycle) filter(state fwk.CycleState, nodes []fwk.NodeInfo, diagnosis *framework.Diagnosis) ([]fwk.NodeInfo, error) {
	out := &protocol.Filter{Feasible: []string{}, Rejected: map[string]protocol.Status{}}
	c.out.Filter = out
	var feasible []fwk.NodeInfo
	var firstErr error
	for _, n := range nodes {
		s := c.fw.RunFilterPluginsWithNominatedPods(c.ctx, state, c.pod, n)
		name := n.Node().Name
		if s.IsSuccess() {
			out.Feasible = append(out.Feasible, name)
			feasible = append(feasible, n)
			continue
		}
		out.Rejected[name] = statusOf(s)
		if s.Code() == fwk.Error && firstErr == nil {
			firstErr = s.AsError()
		}
		diagnosis.NodeToStatus.Set(name, s)
		diagnosis.AddPluginStatus(s)
	}
	return feasible, firstErr
}

// score runs PreScore and Score on the feasible nodes and finds the best total.
func (c *cycle) score(state fwk.CycleState, feasible []fwk.NodeInfo) {
	out := &protocol.Score{PreScore: []protocol.Status{}, Skipped: []string{}, Plugins: []protocol.PluginScores{},
		Totals: map[string]int64{}, Best: []string{}, ScoredByScheduler: len(feasible) > 1}
	c.out.Score = out
	c.out.Outcome = "Scheduled"
	if !c.fw.HasScorePlugins() { // all nodes score 1, as prioritizeNodes says
		for _, n := range feasible {
			out.Totals[n.Node().Name] = 1
		}
		out.Status = statusOf(nil)
		out.Best = bestOf(feasible, out.Totals)
		return
	}
	s := c.fw.RunPreScorePlugins(c.ctx, state, c.pod, feasible)
	skipped := state.GetSkipScorePlugins()
	out.Skipped = sortedNames(skipped)
	if out.Skipped == nil {
		out.Skipped = []string{}
	}
	for _, e := range c.fw.ListPlugins().PreScore.Enabled {
		switch {
		case !s.IsSuccess() && s.Plugin() == e.Name:
			out.PreScore = append(out.PreScore, statusOf(s))
		case skipped.Has(e.Name):
			out.PreScore = append(out.PreScore, protocol.Status{Code: fwk.Skip.String(), Plugin: e.Name, Reasons: []string{}})
		default:
			out.PreScore = append(out.PreScore, protocol.Status{Code: fwk.Success.String(), Plugin: e.Name, Reasons: []string{}})
		}
		if !s.IsSuccess() && s.Plugin() == e.Name {
			break
		}
	}
	if !s.IsSuccess() {
		out.Status = statusOf(s)
		c.out.Outcome, c.out.Message = "Error", s.AsError().Error()
		return
	}
	scores, s := c.fw.RunScorePlugins(c.ctx, state, c.pod, feasible)
	out.Status = statusOf(s)
	if !s.IsSuccess() {
		c.out.Outcome, c.out.Message = "Error", s.AsError().Error()
		return
	}
	weights := map[string]int32{}
	for _, e := range c.fw.ListPlugins().Score.Enabled {
		weights[e.Name] = e.Weight
	}
	byPlugin := map[string]*protocol.PluginScores{}
	var order []string
	for _, node := range scores {
		out.Totals[node.Name] = node.TotalScore
		for _, ps := range node.Scores {
			entry, ok := byPlugin[ps.Name]
			if !ok {
				w := weights[ps.Name]
				if w == 0 {
					w = 1
				}
				entry = &protocol.PluginScores{Plugin: ps.Name, Weight: w, Scores: map[string]int64{}}
				byPlugin[ps.Name] = entry
				order = append(order, ps.Name)
			}
			entry.Scores[node.Name] = ps.Score / int64(entry.Weight)
		}
	}
	for _, name := range order {
		out.Plugins = append(out.Plugins, *byPlugin[name])
	}
	out.Best = bestOf(feasible, out.Totals)
}

func bestOf(feasible []fwk.NodeInfo, totals map[string]int64) []string {
	best := []string{}
	var top int64
	for _, n := range feasible {
		name := n.Node().Name
		t := totals[name]
		switch {
		case len(best) == 0 || t > top:
			best, top = []string{name}, t
		case t == top:
			best = append(best, name)
		}
	}
	sort.Strings(best)
	return best
}
