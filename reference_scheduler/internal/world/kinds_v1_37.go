//go:build k8s_1_37

package world

import (
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
)

// PodGroup (scheduling.k8s.io/v1beta1) exists from Kubernetes v1.37 on: the scheduler reads it
// through its informer (gate GenericWorkload) to schedule a group's pods together.
func init() {
	registerKind("PodGroup", kindInfo{gvr: schedulingv1beta1.SchemeGroupVersion.WithResource("podgroups"), namespaced: true, synced: true})
}
