package world

import (
	"bytes"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install" // defaulting functions of apps/v1
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // defaulting functions of core/v1
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"     // defaulting functions of policy/v1
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install" // defaulting functions of scheduling/v1
	_ "k8s.io/kubernetes/pkg/apis/storage/install"    // defaulting functions of storage/v1
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"

	"github.com/schedperf/reference_scheduler/internal/protocol"
)

// kindInfo: where a kind lives in the tracker, and its informer. synced: a create in engine
// mode returns once the scheduler's informer of the kind holds the objects created.
type kindInfo struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	synced     bool
}

// Kinds that can be written. Nodes and pods also reach the scheduler's cache and queue;
// the others are read by plugins through listers (or, PriorityClass, by our admission). The
// storage kinds are what the volume plugins (VolumeBinding, NodeVolumeLimits, VolumeZone,
// VolumeRestrictions) read; VolumeBinding also keeps PersistentVolumes and claims in assume
// caches fed by informer events (see handlers.go). Like PodGroups they are synced: scheduler_perf
// creates them before the pods that use them, and a pod tried before its claim is in the
// informer fails VolumeBinding's PreFilter.
var kinds = map[string]kindInfo{
	"Node":                  {v1.SchemeGroupVersion.WithResource("nodes"), false, false},
	"Pod":                   {v1.SchemeGroupVersion.WithResource("pods"), true, false},
	"Namespace":             {v1.SchemeGroupVersion.WithResource("namespaces"), false, false},
	"Service":               {v1.SchemeGroupVersion.WithResource("services"), true, false},
	"ReplicationController": {v1.SchemeGroupVersion.WithResource("replicationcontrollers"), true, false},
	"PriorityClass":         {schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), false, false},
	"PodDisruptionBudget":   {policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), true, false},
	"ReplicaSet":            {appsv1.SchemeGroupVersion.WithResource("replicasets"), true, false},
	"StatefulSet":           {appsv1.SchemeGroupVersion.WithResource("statefulsets"), true, false},
	"PersistentVolume":      {v1.SchemeGroupVersion.WithResource("persistentvolumes"), false, true},
	"PersistentVolumeClaim": {v1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true, true},
	"StorageClass":          {storagev1.SchemeGroupVersion.WithResource("storageclasses"), false, true},
	"CSINode":               {storagev1.SchemeGroupVersion.WithResource("csinodes"), false, true},
	"CSIDriver":             {storagev1.SchemeGroupVersion.WithResource("csidrivers"), false, true},
}

// kindOrder lists the supported kinds in the order messages name them.
var kindOrder = []string{"Node", "Pod", "Namespace", "Service", "ReplicationController", "PriorityClass",
	"PodDisruptionBudget", "ReplicaSet", "StatefulSet", "PersistentVolume", "PersistentVolumeClaim",
	"StorageClass", "CSINode", "CSIDriver"}

// registerKind adds a kind that only some Kubernetes releases have (files built with their
// tag call it from init).
func registerKind(kind string, info kindInfo) {
	kinds[kind] = info
	kindOrder = append(kindOrder, kind)
}

// SupportedKinds names the kinds this build writes, comma separated.
func SupportedKinds() string { return strings.Join(kindOrder, ", ") }

// strict decodes manifests as an API server with strict field validation does.
var strict = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// logicalClock stamps creation and start times: a fixed origin plus one second per write, so
// the same requests give the same objects.
type logicalClock struct{ writes int64 }

var clockOrigin = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newLogicalClock() *logicalClock { return &logicalClock{} }

func (c *logicalClock) tick() metav1.Time {
	c.writes++
	return metav1.NewTime(clockOrigin.Add(time.Duration(c.writes) * time.Second))
}

// decode turns one manifest into a typed object of a supported kind.
func decode(raw json.RawMessage, index int) (runtime.Object, kindInfo, *protocol.Error) {
	where := fmt.Sprintf("objects[%d]", index)
	obj, gvk, err := strict.Decode(raw, nil, nil)
	if _, isStrict := runtime.AsStrictDecodingError(err); isStrict {
		if folded, ok := decodeFolded(raw, gvk); ok {
			obj, err = folded, nil
		}
	}
	if err != nil && runtime.IsNotRegisteredError(err) {
		// a kind this build's Kubernetes does not have (PodGroup before v1.37)
		return nil, kindInfo{}, &protocol.Error{Kind: protocol.ErrUnsupported, Field: where + ".kind",
			Message: fmt.Sprintf("%s.kind: %v (supported: %s)", where, err, SupportedKinds())}
	}
	if err != nil {
		perr := &protocol.Error{Kind: protocol.ErrInvalidObject, Message: where + ": " + err.Error()}
		if strictErr, ok := runtime.AsStrictDecodingError(err); ok {
			for _, e := range strictErr.Errors() {
				if m := quotedField.FindStringSubmatch(e.Error()); m != nil {
					perr.Fields = append(perr.Fields, protocol.FieldError{Field: where + "." + m[1], Message: e.Error()})
				}
			}
			// a strict error still decodes the object; it is rejected all the same
		}
		if len(perr.Fields) > 0 {
			perr.Field = perr.Fields[0].Field
		}
		return nil, kindInfo{}, perr
	}
	info, ok := kinds[gvk.Kind]
	if !ok || info.gvr.GroupVersion() != gvk.GroupVersion() {
		return nil, kindInfo{}, &protocol.Error{Kind: protocol.ErrUnsupported, Field: where + ".kind",
			Message: fmt.Sprintf("%s.kind: %s is not supported (supported: %s)", where, gvk, SupportedKinds())}
	}
	m, _ := meta.Accessor(obj)
	if m.GetName() == "" {
		return nil, kindInfo{}, &protocol.Error{Kind: protocol.ErrInvalidObject, Field: where + ".metadata.name",
			Message: where + ".metadata.name: required (generateName is not supported)"}
	}
	return obj, info, nil
}

// decodeFolded decodes raw as scheduler_perf reads its object templates (sigs.k8s.io/yaml's
// UnmarshalStrict into the typed object: encoding/json, so field names match case-insensitively,
// and unknown fields are refused). The strict API decoder matches names exactly, so a template
// key such as "NodeAffinityPolicy" (upstream's templates/pod-with-node-inclusion-policy.yaml) is
// unknown to it though scheduler_perf accepts it. ok is false when Go's JSON refuses raw too;
// the strict decoder's error, which names every field, is then the one reported.
func decodeFolded(raw json.RawMessage, gvk *schema.GroupVersionKind) (runtime.Object, bool) {
	if gvk == nil {
		return nil, false
	}
	obj, err := scheme.Scheme.New(*gvk)
	if err != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if dec.Decode(obj) != nil || dec.More() {
		return nil, false
	}
	return obj, true
}

// deterministicUID: a version 5 style UUID of the object's identity and write number.
func deterministicUID(kind, namespace, name string, write int64) types.UID {
	sum := sha1.Sum([]byte(fmt.Sprintf("schedperf-reference/%s/%s/%s/%d", kind, namespace, name, write)))
	sum[6] = (sum[6] & 0x0f) | 0x50
	sum[8] = (sum[8] & 0x3f) | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]))
}

// fillServerFields sets what an API server sets on a write and the fake does not: defaults
// (kube's own defaulting functions), namespace, UID, creation timestamp, resource version;
// for pods the Pending phase, QoS class and the priority admission's priority. The status is
// otherwise kept as sent: that of PersistentVolumes and claims too, which an API server resets
// on create and scheduler_perf then sets with UpdateStatus (phase Bound); the mirror sends
// the status the objects end with (none: the defaults' phase Pending).
func (w *World) fillServerFields(obj runtime.Object, info kindInfo, old runtime.Object) *protocol.Error {
	legacyscheme.Scheme.Default(obj)
	m, _ := meta.Accessor(obj)
	if info.namespaced && m.GetNamespace() == "" {
		m.SetNamespace(metav1.NamespaceDefault)
	}
	if !info.namespaced {
		m.SetNamespace("")
	}
	now := w.clock.tick()
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if old != nil {
		om, _ := meta.Accessor(old)
		if m.GetUID() != "" && m.GetUID() != om.GetUID() {
			return &protocol.Error{Kind: protocol.ErrConflict, Field: "metadata.uid",
				Message: fmt.Sprintf("%s %s: metadata.uid %s differs from the stored object's %s", kind, key(m.GetNamespace(), m.GetName()), m.GetUID(), om.GetUID())}
		}
		m.SetUID(om.GetUID())
		m.SetCreationTimestamp(om.GetCreationTimestamp())
	} else {
		if m.GetUID() == "" {
			m.SetUID(deterministicUID(kind, m.GetNamespace(), m.GetName(), w.clock.writes))
		}
		if created := m.GetCreationTimestamp(); created.IsZero() {
			m.SetCreationTimestamp(now)
		}
	}
	m.SetResourceVersion(fmt.Sprint(w.clock.writes))
	switch o := obj.(type) {
	case *v1.Namespace:
		// the NamespaceAutoLabel behaviour of every API server
		labels := o.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[v1.LabelMetadataName] = o.Name
		o.SetLabels(labels)
		if o.Status.Phase == "" {
			o.Status.Phase = v1.NamespaceActive
		}
	case *v1.Pod:
		return w.admitPod(o, old, now)
	}
	return nil
}

func (w *World) admitPod(pod *v1.Pod, old runtime.Object, now metav1.Time) *protocol.Error {
	if _, err := w.informer.Core().V1().Namespaces().Lister().Get(pod.Namespace); err != nil {
		return &protocol.Error{Kind: protocol.ErrNotFound, Field: "metadata.namespace",
			Message: fmt.Sprintf("pod %s: namespace %s not found (apply the Namespace first)", key(pod.Namespace, pod.Name), pod.Namespace)}
	}
	if pod.Status.Phase == "" {
		pod.Status.Phase = v1.PodPending
	}
	pod.Status.QOSClass = qos.ComputePodQOS(pod)
	if oldPod, ok := old.(*v1.Pod); ok {
		if oldPod.Spec.NodeName != "" && pod.Spec.NodeName != oldPod.Spec.NodeName {
			return &protocol.Error{Kind: protocol.ErrConflict, Field: "spec.nodeName",
				Message: fmt.Sprintf("pod %s: spec.nodeName cannot change once bound (%s)", key(pod.Namespace, pod.Name), oldPod.Spec.NodeName)}
		}
		if pod.Spec.Priority == nil {
			pod.Spec.Priority = oldPod.Spec.Priority
		}
		if pod.Status.StartTime == nil {
			pod.Status.StartTime = oldPod.Status.StartTime
		}
	} else {
		if err := w.prepareForCreate(pod); err != nil {
			return err
		}
		if err := w.resolvePriority(pod); err != nil {
			return err
		}
	}
	if pod.Spec.NodeName != "" && pod.Status.StartTime == nil {
		pod.Status.StartTime = &now
	}
	return nil
}

// prepareForCreate applies to a new pod's spec what the API server's pod strategy does on
// create (PrepareForCreate): among others, matchLabelKeys / mismatchLabelKeys merged into the
// label selectors of pod (anti-)affinity terms and topology spread constraints, and fields of
// disabled features dropped. The status is left as given (the mirror sends the one the core
// holds).
func (w *World) prepareForCreate(pod *v1.Pod) *protocol.Error {
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, internal, nil); err != nil {
		return protocol.NewError(protocol.ErrInternal, fmt.Sprintf("pod %s: %v", key(pod.Namespace, pod.Name), err))
	}
	podregistry.Strategy.PrepareForCreate(w.ctx, internal)
	out := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return protocol.NewError(protocol.ErrInternal, fmt.Sprintf("pod %s: %v", key(pod.Namespace, pod.Name), err))
	}
	pod.Spec = out.Spec
	return nil
}

// resolvePriority sets spec.priority (and preemptionPolicy) as the Priority admission plugin
// does, except that a priority given in the spec is kept, as scheduler_perf's API server
// (Priority admission disabled) and scheduler_core do.
func (w *World) resolvePriority(pod *v1.Pod) *protocol.Error {
	lister := w.informer.Scheduling().V1().PriorityClasses().Lister()
	var pc *schedulingv1.PriorityClass
	if name := pod.Spec.PriorityClassName; name != "" {
		found, err := lister.Get(name)
		if err != nil {
			if pod.Spec.Priority != nil {
				return nil
			}
			return &protocol.Error{Kind: protocol.ErrInvalidObject, Field: "spec.priorityClassName",
				Message: fmt.Sprintf("pod %s: spec.priorityClassName: no PriorityClass with name %s was found", key(pod.Namespace, pod.Name), name)}
		}
		pc = found
	} else if pod.Spec.Priority == nil {
		all, err := lister.List(everything())
		if err != nil {
			return protocol.NewError(protocol.ErrInternal, err.Error())
		}
		for _, c := range all {
			if c.GlobalDefault && (pc == nil || c.Value < pc.Value) {
				pc = c
			}
		}
	}
	if pc == nil {
		if pod.Spec.Priority == nil {
			zero := int32(0)
			pod.Spec.Priority = &zero
		}
		return nil
	}
	if pod.Spec.Priority == nil || pod.Spec.PriorityClassName != "" {
		value := pc.Value
		pod.Spec.Priority = &value
	}
	if pod.Spec.PreemptionPolicy == nil && pc.PreemptionPolicy != nil {
		policy := *pc.PreemptionPolicy
		pod.Spec.PreemptionPolicy = &policy
	}
	return nil
}

func key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
