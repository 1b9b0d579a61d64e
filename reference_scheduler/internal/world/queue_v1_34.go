//go:build !k8s_1_37

package world

import v1 "k8s.io/api/core/v1"

// The scheduling queue's event methods as v1.34 has them (a logger; Delete without one).

func (w *World) queueAdd(pod *v1.Pod) { w.sched.SchedulingQueue.Add(w.logger, pod) }

func (w *World) queueUpdate(old, new *v1.Pod) {
	w.sched.SchedulingQueue.Update(w.logger, old, new)
}

func (w *World) queueDelete(pod *v1.Pod) { w.sched.SchedulingQueue.Delete(pod) }
