package world

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/schedperf/reference_scheduler/internal/protocol"
)

func everything() labels.Selector { return labels.Everything() }

// newClient is a fake clientset whose pods/binding creations bind the pod in the tracker, as
// the API server's binding subresource does (nodeName set, PodScheduled condition true).
func newClient() *fake.Clientset { return withBindingReactor(fake.NewClientset()) }

// withBindingReactor adds the pods/binding reactor to a fake clientset.
func withBindingReactor(client *fake.Clientset) *fake.Clientset {
	tracker := client.Tracker()
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(clienttesting.CreateAction)
		if !ok || action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		binding, ok := create.GetObject().(*v1.Binding)
		if !ok {
			return true, nil, fmt.Errorf("pods/binding: got a %T", create.GetObject())
		}
		gvr := kinds["Pod"].gvr
		obj, err := tracker.Get(gvr, action.GetNamespace(), binding.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*v1.Pod).DeepCopy()
		if pod.Spec.NodeName != "" {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), pod.Name,
				fmt.Errorf("pod %s/%s is already assigned to node %q", pod.Namespace, pod.Name, pod.Spec.NodeName))
		}
		if binding.UID != "" && binding.UID != pod.UID {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), pod.Name,
				fmt.Errorf("binding UID %s does not match the pod's %s", binding.UID, pod.UID))
		}
		pod.Spec.NodeName = binding.Target.Name
		setCondition(&pod.Status, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
		return true, binding, tracker.Update(gvr, pod, pod.Namespace)
	})
	return client
}

func setCondition(status *v1.PodStatus, c v1.PodCondition) {
	for i := range status.Conditions {
		if status.Conditions[i].Type == c.Type {
			status.Conditions[i].Status = c.Status
			return
		}
	}
	status.Conditions = append(status.Conditions, c)
}

// Apply creates or replaces objects, in order; it stops at the first one rejected (the ones
// before it stay written).
func (w *World) Apply(raws []json.RawMessage) (*protocol.ObjectsResult, *protocol.Error) {
	if err := w.ensureConfigured(); err != nil {
		return nil, err
	}
	out := &protocol.ObjectsResult{Objects: []protocol.Applied{}}
	for i, raw := range raws {
		obj, _, err := decode(raw, i)
		if err != nil {
			return nil, err
		}
		applied, err := w.write(obj, true)
		if err != nil {
			err.Message = fmt.Sprintf("objects[%d]: %s", i, err.Message)
			return nil, err
		}
		out.Objects = append(out.Objects, *applied)
	}
	return out, nil
}

// write stores one decoded object (created, or replacing the stored one when update) and
// brings listers, cache and queue in step.
func (w *World) write(obj runtime.Object, update bool) (*protocol.Applied, *protocol.Error) {
	kind := kindOf(obj)
	info := kinds[kind]
	m, _ := meta.Accessor(obj)
	ns := m.GetNamespace()
	if info.namespaced && ns == "" {
		ns = metav1.NamespaceDefault
	}
	tracker := w.client.Tracker()
	old, err := tracker.Get(info.gvr, ns, m.GetName())
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	if err != nil {
		old = nil
	} else if !update {
		return nil, protocol.NewError(protocol.ErrConflict, fmt.Sprintf("%s %s already exists", kind, key(ns, m.GetName())))
	}
	if perr := w.fillServerFields(obj, info, old); perr != nil {
		return nil, perr
	}
	action := "created"
	if old != nil {
		action = "updated"
		err = tracker.Update(info.gvr, obj, m.GetNamespace())
	} else {
		err = tracker.Create(info.gvr, obj, m.GetNamespace())
	}
	if err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	stored, err := tracker.Get(info.gvr, m.GetNamespace(), m.GetName())
	if err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	if perr := w.sync(kind, old, stored); perr != nil {
		return nil, perr
	}
	return &protocol.Applied{Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName(), UID: string(m.GetUID()), Action: action}, nil
}

// Delete removes objects, in order; it stops at the first one missing.
func (w *World) Delete(refs []protocol.ObjectRef) (*protocol.ObjectsResult, *protocol.Error) {
	if err := w.ensureConfigured(); err != nil {
		return nil, err
	}
	out := &protocol.ObjectsResult{Objects: []protocol.Applied{}}
	for i, ref := range refs {
		info, ok := kinds[ref.Kind]
		if !ok {
			return nil, &protocol.Error{Kind: protocol.ErrUnsupported, Field: fmt.Sprintf("refs[%d].kind", i),
				Message: fmt.Sprintf("refs[%d].kind: %q is not a supported kind", i, ref.Kind)}
		}
		ns := ref.Namespace
		if info.namespaced && ns == "" {
			ns = metav1.NamespaceDefault
		}
		if !info.namespaced {
			ns = ""
		}
		tracker := w.client.Tracker()
		old, err := tracker.Get(info.gvr, ns, ref.Name)
		if err != nil {
			return nil, protocol.NewError(protocol.ErrNotFound, fmt.Sprintf("refs[%d]: %s %s not found", i, ref.Kind, key(ns, ref.Name)))
		}
		if err := tracker.Delete(info.gvr, ns, ref.Name); err != nil {
			return nil, protocol.NewError(protocol.ErrInternal, err.Error())
		}
		w.clock.tick()
		if perr := w.sync(ref.Kind, old, nil); perr != nil {
			return nil, perr
		}
		m, _ := meta.Accessor(old)
		out.Objects = append(out.Objects, protocol.Applied{Kind: ref.Kind, Namespace: ns, Name: ref.Name, UID: string(m.GetUID()), Action: "deleted"})
	}
	return out, nil
}

// Bind binds a pending pod to a node through the pods/binding subresource. startTime (RFC 3339,
// fractions of a second kept) is the pod's status.startTime; empty: the logical clock's.
func (w *World) Bind(namespace, name, node, startTime string) (*protocol.ObjectsResult, *protocol.Error) {
	if err := w.ensureConfigured(); err != nil {
		return nil, err
	}
	var started *metav1.Time
	if startTime != "" {
		t, err := time.Parse(time.RFC3339Nano, startTime)
		if err != nil {
			return nil, &protocol.Error{Kind: protocol.ErrProtocol, Field: "startTime",
				Message: fmt.Sprintf("startTime: expected an RFC 3339 time, got %q", startTime)}
		}
		started = &metav1.Time{Time: t}
	}
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	podGVR, nodeGVR := kinds["Pod"].gvr, kinds["Node"].gvr
	tracker := w.client.Tracker()
	old, err := tracker.Get(podGVR, namespace, name)
	if err != nil {
		return nil, protocol.NewError(protocol.ErrNotFound, fmt.Sprintf("pod %s not found", key(namespace, name)))
	}
	if _, err := tracker.Get(nodeGVR, "", node); err != nil {
		return nil, protocol.NewError(protocol.ErrNotFound, fmt.Sprintf("node %s not found", node))
	}
	pod := old.(*v1.Pod)
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := w.client.CoreV1().Pods(namespace).Bind(context.Background(), binding, metav1.CreateOptions{}); err != nil {
		kind := protocol.ErrInternal
		if apierrors.IsConflict(err) {
			kind = protocol.ErrConflict
		}
		return nil, protocol.NewError(kind, err.Error())
	}
	stored, err := tracker.Get(podGVR, namespace, name)
	if err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	// what the kubelet (or KWOK) would report once the pod runs: its start time
	bound := stored.(*v1.Pod).DeepCopy()
	now := w.clock.tick()
	bound.ResourceVersion = fmt.Sprint(w.clock.writes)
	if started != nil {
		bound.Status.StartTime = started
	} else if bound.Status.StartTime == nil {
		bound.Status.StartTime = &now
	}
	if err := tracker.Update(podGVR, bound, namespace); err != nil {
		return nil, protocol.NewError(protocol.ErrInternal, err.Error())
	}
	if perr := w.sync("Pod", old, bound); perr != nil {
		return nil, perr
	}
	return &protocol.ObjectsResult{Objects: []protocol.Applied{{Kind: "Pod", Namespace: namespace, Name: name, UID: string(pod.UID), Action: "bound"}}}, nil
}

func kindOf(obj runtime.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	switch obj.(type) {
	case *v1.Namespace:
		return "Namespace"
	case *v1.Pod:
		return "Pod"
	case *v1.Node:
		return "Node"
	}
	return fmt.Sprintf("%T", obj)
}

// indexer is the store behind a kind's lister.
func (w *World) indexer(kind string) (cache.Indexer, error) {
	gvr := kinds[kind].gvr
	if kind == "Pod" {
		return w.informer.Core().V1().Pods().Informer().GetIndexer(), nil
	}
	inf, err := w.informer.ForResource(gvr)
	if err != nil {
		return nil, err
	}
	return inf.Informer().GetIndexer(), nil
}

// sync applies one change (old nil: created; new nil: deleted) to the lister's store, to the
// plugins' handlers of the storage kinds' informers and, for nodes and pods, to the
// scheduler's cache and queue.
func (w *World) sync(kind string, old, new runtime.Object) *protocol.Error {
	idx, err := w.indexer(kind)
	if err != nil {
		return protocol.NewError(protocol.ErrInternal, err.Error())
	}
	if kind == "Pod" {
		return w.syncPod(idx, podOrNil(old), podOrNil(new))
	}
	if err := index(idx, old, new); err != nil {
		return protocol.NewError(protocol.ErrInternal, err.Error())
	}
	if rec := w.handlers[kind]; rec != nil {
		rec.notify(old, new)
	}
	if kind != "Node" {
		return nil
	}
	switch {
	case new == nil:
		err = w.sched.Cache.RemoveNode(w.logger, old.(*v1.Node))
	case old == nil:
		w.sched.Cache.AddNode(w.logger, new.(*v1.Node))
	default:
		w.sched.Cache.UpdateNode(w.logger, old.(*v1.Node), new.(*v1.Node))
	}
	if err != nil {
		return protocol.NewError(protocol.ErrInternal, err.Error())
	}
	return nil
}

// index applies one change to a lister's indexer: a delete (new nil), an add (old nil) or an
// update.
func index(idx cache.Indexer, old, new runtime.Object) error {
	switch {
	case new == nil:
		return idx.Delete(old)
	case old == nil:
		return idx.Add(new)
	default:
		return idx.Update(new)
	}
}

// podObject is the pod as a runtime.Object, nil for none (not a typed nil).
func podObject(p *v1.Pod) runtime.Object {
	if p == nil {
		return nil
	}
	return p
}

func podOrNil(obj runtime.Object) *v1.Pod {
	if obj == nil {
		return nil
	}
	return obj.(*v1.Pod)
}

// visible: the scheduler's pod informer leaves out terminal pods (its field selector).
func visible(pod *v1.Pod) bool {
	return pod != nil && pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed
}

// syncPod routes a pod change as the scheduler's two filtered pod handlers do: assigned pods
// to the cache, pending pods of a known profile to the queue; an object that passes a
// handler's filter only before (after) the change is a delete (add) for that handler.
func (w *World) syncPod(idx cache.Indexer, old, new *v1.Pod) *protocol.Error {
	if !visible(old) {
		old = nil
	}
	if !visible(new) {
		new = nil
	}
	if old == nil && new == nil {
		return nil
	}
	err := index(idx, podObject(old), podObject(new))
	if err != nil {
		return protocol.NewError(protocol.ErrInternal, err.Error())
	}
	if err := w.settleAssumed(old, new); err != nil {
		return protocol.NewError(protocol.ErrInternal, err.Error())
	}
	assigned := func(p *v1.Pod) bool { return p != nil && p.Spec.NodeName != "" }
	queued := func(p *v1.Pod) bool {
		return p != nil && p.Spec.NodeName == "" && w.sched.Profiles.HandlesSchedulerName(p.Spec.SchedulerName)
	}
	logger, c := w.logger, w.sched.Cache
	// the cache handler
	switch {
	case assigned(old) && assigned(new):
		err = c.UpdatePod(logger, old, new)
	case assigned(old):
		err = c.RemovePod(logger, old)
	case assigned(new):
		err = c.AddPod(logger, new)
	}
	if err != nil {
		return protocol.NewError(protocol.ErrInternal, err.Error())
	}
	// the queue handler
	switch {
	case queued(old) && queued(new):
		w.queueUpdate(old, new)
	case queued(old):
		w.queueDelete(old)
	case queued(new):
		w.queueAdd(new)
	}
	return nil
}
