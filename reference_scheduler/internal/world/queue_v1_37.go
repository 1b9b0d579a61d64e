//go:build k8s_1_37

package world

import v1 "k8s.io/api/core/v1"

// The scheduling queue's event methods as v1.37 has them (Add and Update take a context,
// Delete a logger).

func (w *World) queueAdd(pod *v1.Pod) { w.sched.SchedulingQueue.Add(w.ctx, pod) }

func (w *World) queueUpdate(old, new *v1.Pod) {
	w.sched.SchedulingQueue.Update(w.ctx, old, new)
}

func (w *World) queueDelete(pod *v1.Pod) { w.sched.SchedulingQueue.Delete(w.logger, pod) }
