"""InterPodAffinity terms resolved against their owner pod (kube's ``framework.AffinityTerm``).

A resolved term is a hashable ``(topology_key, NamespaceFilter, LabelSelector)``, so it can key
the incremental indexes in ``nodetable.pod_index``:

- a nil ``labelSelector`` becomes ``NOTHING`` (it matches no pod);
- ``matchLabelKeys`` / ``mismatchLabelKeys`` are merged into the selector as ``In`` / ``NotIn``
  on the owner's label values, for keys the owner has (what the API server does at creation);
- with neither ``namespaces`` nor ``namespaceSelector``, the namespace set is the owner's
  namespace; an empty ``namespaceSelector`` ``{}`` matches every namespace.

``AffinityTerm.matches(pod, ns_labels)`` is upstream's ``Matches``: the pod's namespace is in the
set, or the namespace selector matches ``ns_labels`` (the labels of that pod's namespace), and
the selector matches the pod's labels. For the incoming pod's own terms, ``merge_namespaces``
unrolls a non-empty namespace selector into the set of existing namespaces it selects (kube's
``mergeAffinityTermNamespacesIfNotEmpty``), after which no namespace labels are needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from scheduler_core.api.affinity import Affinity, PodAffinityTerm
from scheduler_core.api.pod import Pod
from scheduler_core.api.selectors import LabelRequirement, LabelSelector
from scheduler_core.nodetable.pod_index import NamespaceFilter

__all__ = [
    "NOTHING",
    "PREFERRED",
    "PREFERRED_ANTI",
    "REQUIRED",
    "AffinityTerm",
    "PodTerms",
    "ScoreTerm",
    "matches_all",
    "merge_namespaces",
    "pod_terms",
]

# a selector no label set satisfies (the key "" never carries a value in an empty set)
NOTHING = LabelSelector((LabelRequirement("", "In", frozenset()),))

# kinds of an existing pod's term that scores the incoming pod
REQUIRED = 0  # required affinity, weighted by hardPodAffinityWeight
PREFERRED = 1  # preferred affinity, +weight
PREFERRED_ANTI = 2  # preferred anti-affinity, -weight

_CACHE_LIMIT = 4096


class AffinityTerm(NamedTuple):
    topology_key: str
    namespaces: NamespaceFilter
    selector: LabelSelector

    def matches(self, pod: Pod, ns_labels: dict[str, str]) -> bool:
        """Upstream ``AffinityTerm.Matches``; ``ns_labels`` are the labels of ``pod``'s
        namespace ({} when unknown, as Go's nil set)."""
        nf = self.namespaces
        if pod.namespace in nf.names or (nf.selector is not None
                                         and nf.selector.matches(ns_labels)):
            return self.selector.matches(pod.labels)
        return False


class ScoreTerm(NamedTuple):
    """An existing pod's term as it scores incoming pods (weight is part of the key)."""

    kind: int  # REQUIRED, PREFERRED or PREFERRED_ANTI
    weight: int  # 0 for REQUIRED (the plugin's hardPodAffinityWeight applies)
    term: AffinityTerm


class PodTerms(NamedTuple):
    required_affinity: tuple[AffinityTerm, ...]
    required_anti: tuple[AffinityTerm, ...]
    preferred_affinity: tuple[tuple[int, AffinityTerm], ...]
    preferred_anti: tuple[tuple[int, AffinityTerm], ...]
    score_terms: tuple[ScoreTerm, ...]  # what this pod contributes when it is placed


_EMPTY = PodTerms((), (), (), (), ())
# id(affinity), namespace -> (affinity kept alive so the id stays unique, the label keys the
# terms read (matchLabelKeys / mismatchLabelKeys), {those labels' values: terms})
_cache: dict[tuple[int, str], tuple[Affinity, tuple[str, ...], dict[tuple, PodTerms]]] = {}


def _selector(term: PodAffinityTerm, labels: dict[str, str]) -> LabelSelector:
    sel = term.label_selector
    if sel is None:  # a nil selector matches nothing; label keys are not merged into it
        return NOTHING
    extra = tuple(LabelRequirement(k, "In", frozenset((labels[k],)))
                  for k in term.match_label_keys if k in labels)
    extra += tuple(LabelRequirement(k, "NotIn", frozenset((labels[k],)))
                   for k in term.mismatch_label_keys if k in labels)
    return sel.with_requirements(extra) if extra else sel


def resolve(term: PodAffinityTerm, pod: Pod) -> AffinityTerm:
    """``newAffinityTerm``: a PodAffinityTerm of ``pod`` as a hashable, matchable term."""
    if not term.namespaces and term.namespace_selector is None:
        names = frozenset((pod.namespace,))
    else:
        names = frozenset(term.namespaces)
    return AffinityTerm(term.topology_key, NamespaceFilter(names, term.namespace_selector),
                        _selector(term, pod.labels))


def _label_keys(affinity: Affinity) -> tuple[str, ...]:
    """The owner's labels the resolved terms depend on (matchLabelKeys, mismatchLabelKeys)."""
    terms = (*affinity.required_pod_affinity, *affinity.required_pod_anti_affinity,
             *(w.term for w in affinity.preferred_pod_affinity),
             *(w.term for w in affinity.preferred_pod_anti_affinity))
    keys = {k: None for t in terms for k in (*t.match_label_keys, *t.mismatch_label_keys)}
    return tuple(keys)


def _build(affinity: Affinity, pod: Pod) -> PodTerms:
    req = tuple(resolve(t, pod) for t in affinity.required_pod_affinity)
    anti = tuple(resolve(t, pod) for t in affinity.required_pod_anti_affinity)
    pref = tuple((w.weight, resolve(w.term, pod)) for w in affinity.preferred_pod_affinity)
    pref_anti = tuple((w.weight, resolve(w.term, pod))
                      for w in affinity.preferred_pod_anti_affinity)
    score = (tuple(ScoreTerm(REQUIRED, 0, t) for t in req)
             + tuple(ScoreTerm(PREFERRED, w, t) for w, t in pref)
             + tuple(ScoreTerm(PREFERRED_ANTI, w, t) for w, t in pref_anti))
    return PodTerms(req, anti, pref, pref_anti, score)


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's four term lists, resolved (memoised per pod spec, namespace and the values
    of the labels the terms read)."""
    affinity = pod.spec.affinity
    if not affinity.has_pod_affinity:
        return _EMPTY
    key = (id(affinity), pod.namespace)
    hit = _cache.get(key)
    if hit is None or hit[0] is not affinity:
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        hit = _cache[key] = (affinity, _label_keys(affinity), {})
    labels = pod.labels
    values = tuple(labels.get(k) for k in hit[1])
    by_values = hit[2]
    terms = by_values.get(values)
    if terms is None:
        if len(by_values) >= _CACHE_LIMIT:
            by_values.clear()
        terms = by_values[values] = _build(affinity, pod)
    return terms


def merge_namespaces(term: AffinityTerm, namespaces: Iterable[tuple[str, dict[str, str]]]
                     ) -> AffinityTerm:
    """For the incoming pod's terms: unroll a non-empty namespace selector into the names of
    the existing namespaces it selects. An empty selector ``{}`` (all namespaces) stays."""
    sel = term.namespaces.selector
    if sel is None or sel.empty:
        return term
    names = set(term.namespaces.names)
    names.update(name for name, labels in namespaces if sel.matches(labels))
    return term._replace(namespaces=NamespaceFilter(frozenset(names)))


def matches_all(terms: tuple[AffinityTerm, ...], pod: Pod, ns_labels: dict[str, str]) -> bool:
    """``podMatchesAllAffinityTerms``: False for no terms."""
    if not terms:
        return False
    return all(t.matches(pod, ns_labels) for t in terms)
