package world

import (
	"encoding/json"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/schedperf/reference_scheduler/internal/protocol"
)

// NewEngineClient is a fake clientset whose pods/binding creations bind the pod in the
// tracker, as the API server's binding subresource does (see newClient). Its tracker is the
// plain object tracker (fake.NewSimpleClientset): the field-managed tracker of
// fake.NewClientset costs several milliseconds of CPU per write, more than the scheduler
// spends on a pod, and nothing in the scheduler reads managed fields.
func NewEngineClient() *fake.Clientset {
	//nolint:staticcheck // deliberately the plain tracker (see above)
	return withBindingReactor(fake.NewSimpleClientset())
}

// KindResource is where a supported kind lives in the tracker, and whether it is namespaced.
func KindResource(kind string) (schema.GroupVersionResource, bool, bool) {
	info, ok := kinds[kind]
	return info.gvr, info.namespaced, ok
}

// KindSynced says whether a create of the kind in engine mode waits until the scheduler's
// informer holds the objects (as scheduler_perf's op for that kind does).
func KindSynced(kind string) bool { return kinds[kind].synced }

// Admitter prepares objects for a create through a clientset whose informers run on their
// own (the engine): the same decoding and the same fields an API server sets as the world's
// writes (defaults, namespace, uid, timestamps, pod phase, QoS class, priority). It keeps its
// own namespace and PriorityClass stores, fed by the objects it admits, so that admission does
// not depend on when the running informers catch up.
type Admitter struct {
	w     *World
	nsIdx cache.Indexer
	pcIdx cache.Indexer
}

// NewAdmitter is an admitter that knows the four namespaces every API server creates.
func NewAdmitter(client *fake.Clientset) *Admitter {
	factory := informers.NewSharedInformerFactory(client, 0)
	a := &Admitter{
		w:     &World{client: client, informer: factory, clock: newLogicalClock()},
		nsIdx: factory.Core().V1().Namespaces().Informer().GetIndexer(),
		pcIdx: factory.Scheduling().V1().PriorityClasses().Informer().GetIndexer(),
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		obj := &v1.Namespace{}
		obj.Name = ns
		_ = a.nsIdx.Add(obj)
	}
	return a
}

// Prepare decodes objects[index] and fills what an API server sets on a create. It returns
// the object, its kind and where it goes in the tracker.
func (a *Admitter) Prepare(raw json.RawMessage, index int) (runtime.Object, string, schema.GroupVersionResource, *protocol.Error) {
	obj, info, perr := decode(raw, index)
	if perr != nil {
		return nil, "", schema.GroupVersionResource{}, perr
	}
	if perr := a.w.fillServerFields(obj, info, nil); perr != nil {
		perr.Message = "objects[" + strconv.Itoa(index) + "]: " + perr.Message
		return nil, "", schema.GroupVersionResource{}, perr
	}
	kind := kindOf(obj)
	switch kind {
	case "Namespace":
		_ = a.nsIdx.Add(obj)
	case "PriorityClass":
		_ = a.pcIdx.Add(obj)
	}
	return obj, kind, info.gvr, nil
}

// Forget drops a namespace or PriorityClass from the admitter's stores (after a delete).
func (a *Admitter) Forget(kind string, obj runtime.Object) {
	if _, err := meta.Accessor(obj); err != nil {
		return
	}
	switch kind {
	case "Namespace":
		_ = a.nsIdx.Delete(obj)
	case "PriorityClass":
		_ = a.pcIdx.Delete(obj)
	}
}

// Describe is the reply to config for a scheduler built from cfg: each profile's plugins per
// extension point and score weights.
func Describe(cfg *config.KubeSchedulerConfiguration, sched *scheduler.Scheduler) *protocol.ConfigResult {
	return describe(cfg, sched)
}

// PrepareUpdate decodes objects[index] as the new version of a stored object and fills what
// an API server keeps or sets on an update (uid, creation timestamp, defaults, pod phase, QoS
// class). stored looks the current object up; a missing one is not_found. A pod whose new
// version has no spec.nodeName keeps the stored one (a bound pod stays bound).
func (a *Admitter) PrepareUpdate(raw json.RawMessage, index int,
	stored func(gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error),
) (runtime.Object, runtime.Object, string, schema.GroupVersionResource, *protocol.Error) {
	obj, info, perr := decode(raw, index)
	if perr != nil {
		return nil, nil, "", schema.GroupVersionResource{}, perr
	}
	m, _ := meta.Accessor(obj)
	ns := m.GetNamespace()
	if !info.namespaced {
		ns = ""
	} else if ns == "" {
		ns = "default"
	}
	kind := kindOf(obj)
	old, err := stored(info.gvr, ns, m.GetName())
	if err != nil {
		return nil, nil, "", schema.GroupVersionResource{}, protocol.NewError(protocol.ErrNotFound,
			"objects["+strconv.Itoa(index)+"]: "+kind+" "+key(ns, m.GetName())+" not found")
	}
	if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName == "" {
		pod.Spec.NodeName = old.(*v1.Pod).Spec.NodeName
	}
	if perr := a.w.fillServerFields(obj, info, old); perr != nil {
		perr.Message = "objects[" + strconv.Itoa(index) + "]: " + perr.Message
		return nil, nil, "", schema.GroupVersionResource{}, perr
	}
	switch kind {
	case "Namespace":
		_ = a.nsIdx.Update(obj)
	case "PriorityClass":
		_ = a.pcIdx.Update(obj)
	}
	return obj, old, kind, info.gvr, nil
}
