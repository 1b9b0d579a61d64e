package world

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedperf/reference_scheduler/internal/protocol"
)

// Assume makes the scheduler cache assume the pending pod namespace/name on node, as a
// pod-group cycle does while it tries the group's members one after another (each member is
// evaluated with the ones before it assumed). Nothing is written to the store: the pod stays
// pending in the tracker and the listers, as in the scheduler between Reserve and binding.
func (w *World) Assume(namespace, name, node string) (*protocol.ObjectsResult, *protocol.Error) {
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	pod, perr := w.Pod(namespace, name)
	if perr != nil {
		return nil, perr
	}
	k := key(namespace, name)
	if pod.Spec.NodeName != "" {
		return nil, protocol.NewError(protocol.ErrConflict, fmt.Sprintf("pod %s is bound to %s: only a pending pod can be assumed", k, pod.Spec.NodeName))
	}
	if _, ok := w.assumed[k]; ok {
		return nil, protocol.NewError(protocol.ErrConflict, fmt.Sprintf("pod %s is assumed already", k))
	}
	if _, err := w.client.Tracker().Get(kinds["Node"].gvr, "", node); err != nil {
		return nil, protocol.NewError(protocol.ErrNotFound, fmt.Sprintf("node %s not found", node))
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = node
	if err := w.sched.Cache.AssumePod(w.logger, assumed); err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	if w.assumed == nil {
		w.assumed = map[string]*v1.Pod{}
	}
	w.assumed[k] = assumed
	return &protocol.ObjectsResult{Objects: []protocol.Applied{{Kind: "Pod", Namespace: namespace, Name: name, UID: string(pod.UID), Action: "assumed"}}}, nil
}

// Forget undoes Assume (the cache's ForgetPod), as a pod-group cycle does when it reverts a
// placement or the group does not fit.
func (w *World) Forget(namespace, name string) (*protocol.ObjectsResult, *protocol.Error) {
	if err := w.ensureConfigured(); err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	k := key(namespace, name)
	assumed, ok := w.assumed[k]
	if !ok {
		return nil, protocol.NewError(protocol.ErrConflict, fmt.Sprintf("pod %s is not assumed", k))
	}
	if err := w.sched.Cache.ForgetPod(w.logger, assumed); err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	delete(w.assumed, k)
	return &protocol.ObjectsResult{Objects: []protocol.Applied{{Kind: "Pod", Namespace: namespace, Name: name, UID: string(assumed.UID), Action: "forgotten"}}}, nil
}

// settleAssumed keeps the assumptions in step with a pending pod's change: bound, the
// cache's AddPod confirms the assumption; deleted, the assumption is forgotten first.
func (w *World) settleAssumed(old, new *v1.Pod) error {
	if old == nil || old.Spec.NodeName != "" || len(w.assumed) == 0 {
		return nil
	}
	k := key(old.Namespace, old.Name)
	assumed, ok := w.assumed[k]
	if !ok {
		return nil
	}
	switch {
	case new == nil:
		if err := w.sched.Cache.ForgetPod(w.logger, assumed); err != nil {
			return err
		}
	case new.Spec.NodeName == "":
		return nil // still pending and assumed
	}
	delete(w.assumed, k)
	return nil
}
