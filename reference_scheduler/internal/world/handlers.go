package world

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
)

// handledKinds are the kinds whose informers' event handlers the world calls itself on every
// write. No informer runs in the world, so a plugin that keeps its own copy of objects, fed
// by informer events rather than read through a lister, would never see them: v1.34's
// VolumeBinding keeps PersistentVolumes and claims in assume caches (v1.37's read the
// informer's store, and only drop what they assumed on an event).
var handledKinds = []string{"PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver"}

// schedulerPackage is where kube-scheduler's own event handlers live (the ones that move pods
// in the queue, or route nodes and pods to the cache): the world does their part itself,
// for nodes and pods, and leaves the queue's moves out, for every kind.
const schedulerPackage = "k8s.io/kubernetes/pkg/scheduler."

var cachePackage = reflect.TypeOf(cache.ResourceEventHandlerFuncs{}).PkgPath()

// handlerRecorder is a shared informer that keeps the event handlers added to it (besides
// adding them to the informer), so that the world can call them.
type handlerRecorder struct {
	cache.SharedIndexInformer
	mu       sync.Mutex
	handlers []recordedHandler
}

type recordedHandler struct {
	handler      cache.ResourceEventHandler
	registration cache.ResourceEventHandlerRegistration
}

// recordHandlers makes the factory's informers of the handled kinds handler recorders (before
// anything asks the factory for them) and returns them by kind.
func recordHandlers(factory informers.SharedInformerFactory, client clientset.Interface) (map[string]*handlerRecorder, error) {
	// the informers a factory makes by default, made by a factory of their own
	defaults := informers.NewSharedInformerFactory(client, 0)
	out := make(map[string]*handlerRecorder, len(handledKinds))
	for _, kind := range handledKinds {
		gvr := kinds[kind].gvr
		obj, err := scheme.Scheme.New(gvr.GroupVersion().WithKind(kind)) // the factory's key
		if err != nil {
			return nil, err
		}
		generic, err := defaults.ForResource(gvr)
		if err != nil {
			return nil, err
		}
		rec := &handlerRecorder{SharedIndexInformer: generic.Informer()}
		got := factory.InformerFor(obj, func(clientset.Interface, time.Duration) cache.SharedIndexInformer { return rec })
		if got != rec {
			// the factory had made the informer already: its handlers cannot be recorded
			continue
		}
		out[kind] = rec
	}
	return out, nil
}

func (r *handlerRecorder) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	reg, err := r.SharedIndexInformer.AddEventHandler(h)
	return r.keep(h, reg, err)
}

func (r *handlerRecorder) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	reg, err := r.SharedIndexInformer.AddEventHandlerWithResyncPeriod(h, resync)
	return r.keep(h, reg, err)
}

func (r *handlerRecorder) AddEventHandlerWithOptions(h cache.ResourceEventHandler, opts cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	reg, err := r.SharedIndexInformer.AddEventHandlerWithOptions(h, opts)
	return r.keep(h, reg, err)
}

func (r *handlerRecorder) RemoveEventHandler(reg cache.ResourceEventHandlerRegistration) error {
	r.mu.Lock()
	for i, h := range r.handlers {
		if h.registration == reg {
			r.handlers = append(r.handlers[:i:i], r.handlers[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	return r.SharedIndexInformer.RemoveEventHandler(reg)
}

// keep records a handler that is not kube-scheduler's own and, as a shared informer does for
// a handler added late, hands it the objects the store already holds.
func (r *handlerRecorder) keep(h cache.ResourceEventHandler, reg cache.ResourceEventHandlerRegistration, err error) (cache.ResourceEventHandlerRegistration, error) {
	if err != nil || strings.HasPrefix(handlerCode(reflect.ValueOf(h)), schedulerPackage) {
		return reg, err
	}
	r.mu.Lock()
	r.handlers = append(r.handlers, recordedHandler{handler: h, registration: reg})
	r.mu.Unlock()
	for _, obj := range r.GetIndexer().List() {
		h.OnAdd(obj, true)
	}
	return reg, nil
}

// notify hands one change (old nil: an add; new nil: a delete) to the recorded handlers, in
// the order they were added.
func (r *handlerRecorder) notify(old, new any) {
	r.mu.Lock()
	handlers := append([]recordedHandler(nil), r.handlers...)
	r.mu.Unlock()
	for _, h := range handlers {
		switch {
		case new == nil:
			h.handler.OnDelete(old)
		case old == nil:
			h.handler.OnAdd(new, false)
		default:
			h.handler.OnUpdate(old, new)
		}
	}
}

// handlerCode names the code behind a handler: the function of its first function field (the
// Funcs types of client-go, FilteringResourceEventHandler), or, for a handler type of its
// own, that type.
func handlerCode(v reflect.Value) string {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Func:
		if v.IsNil() {
			return ""
		}
		if f := runtime.FuncForPC(v.Pointer()); f != nil {
			return f.Name()
		}
	case reflect.Struct:
		if v.Type().PkgPath() != cachePackage {
			return v.Type().PkgPath() + "." + v.Type().Name()
		}
		for i := 0; i < v.NumField(); i++ {
			if name := handlerCode(v.Field(i)); name != "" {
				return name
			}
		}
	}
	return ""
}
