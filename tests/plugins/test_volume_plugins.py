"""The four volume plugins' verdicts, after the cases of upstream's own unit tests
(volume_binding_test.go, volume_restrictions_test.go, volume_zone_test.go, csi_test.go of
v1.34), restated with our objects and names."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler_core.framework.interface import Code, CycleState
from scheduler_core.plugins.node_volume_limits import NodeVolumeLimits
from scheduler_core.plugins.volume_binding import (
    ERR_BIND_CONFLICT,
    ERR_NODE_CONFLICT,
    ERR_NOT_ENOUGH_SPACE,
    ERR_PV_NOT_EXIST,
    VolumeBinding,
)
from scheduler_core.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)
from scheduler_core.plugins.volume_zone import VolumeZone
from tests.builders import expr, make_node, make_pod, run_filter, term

from .volume_fixtures import EBS, ZONE, bound, cluster_of, csi_node, pv, pvc, storage_class

AWS_PLUGIN = "kubernetes.io/aws-ebs"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"


def _nodes(*zones: str | None):
    out = []
    for i, z in enumerate(zones):
        b = make_node(f"n{i}").alloc(cpu="4", memory="8Gi", pods="110")
        if z is not None:
            b.label(ZONE, z)
        out.append(b.obj())
    return out


def _reasons(result: dict) -> dict:
    return {n: (None if s is None else (s.code, s.reasons)) for n, s in result.items()}


# --------------------------------------------------------------------------- NodeVolumeLimits
def test_limits_reject_a_node_whose_driver_is_full():
    nodes = _nodes(None, None)
    objs = [csi_node("n0", {EBS: 2}), csi_node("n1", {EBS: 3}),
            *bound("a"), *bound("b"), *bound("c")]
    placed = {"n0": [make_pod("pa").claim("a").obj(), make_pod("pb").claim("b").obj()],
              "n1": [make_pod("pa2").claim("a").obj(), make_pod("pb2").claim("b").obj()]}
    c, h = cluster_of(nodes, objs, placed)
    out = run_filter(NodeVolumeLimits(handle=h), make_pod("new").claim("c").obj(), c.table)
    assert _reasons(out) == {"n0": (Code.UNSCHEDULABLE, ("node(s) exceed max volume count",)),
                             "n1": None}


def test_a_volume_already_used_on_the_node_is_not_counted_again():
    c, h = cluster_of(_nodes(None), [csi_node("n0", {EBS: 1}), *bound("a")],
                      {"n0": [make_pod("pa").claim("a").obj()]})
    assert run_filter(NodeVolumeLimits(handle=h), make_pod("new").claim("a").obj(),
                      c.table) == {"n0": None}


def test_two_claims_of_one_volume_handle_count_once():
    # two volumes with the same driver and handle are one attachment (unique name)
    objs = [csi_node("n0", {EBS: 1}), *bound("a", handle="same"), *bound("b", handle="same")]
    c, h = cluster_of(_nodes(None), objs, {"n0": [make_pod("pa").claim("a").obj()]})
    assert run_filter(NodeVolumeLimits(handle=h), make_pod("new").claim("b").obj(),
                      c.table) == {"n0": None}


def test_a_node_without_csi_node_or_limit_takes_any_number():
    objs = [csi_node("n1", {"other.csi": 0}), *bound("a"), *bound("b")]
    c, h = cluster_of(_nodes(None, None), objs,
                      {"n0": [make_pod("pa").claim("a").obj()],
                       "n1": [make_pod("pa2").claim("a").obj()]})
    assert run_filter(NodeVolumeLimits(handle=h), make_pod("new").claim("b").obj(),
                      c.table) == {"n0": None, "n1": None}


@pytest.mark.parametrize(("migrated", "fits"), [((AWS_PLUGIN,), False), ((), True)],
                         ids=["migrated-counts", "not-migrated-not-counted"])
def test_in_tree_volumes_count_only_where_migrated(migrated, fits):
    objs = [csi_node("n0", {EBS: 1}, migrated), *bound("a", aws="vol-a"),
            *bound("b", aws="aws://us-east-1a/vol-b")]
    c, h = cluster_of(_nodes(None), objs, {"n0": [make_pod("pa").claim("a").obj()]})
    out = run_filter(NodeVolumeLimits(handle=h), make_pod("new").claim("b").obj(), c.table)
    assert (out["n0"] is None) is fits


def test_inline_in_tree_volumes_count_where_migrated():
    objs = [csi_node("n0", {EBS: 1}, (AWS_PLUGIN,))]
    disk = {"awsElasticBlockStore": {"volumeID": "vol-1"}}
    c, h = cluster_of(_nodes(None), objs, {"n0": [make_pod("pa").volume(disk).obj()]})
    other = {"awsElasticBlockStore": {"volumeID": "vol-2"}}
    out = run_filter(NodeVolumeLimits(handle=h), make_pod("new").volume(other).obj(), c.table)
    assert out["n0"] is not None


def test_a_pending_claim_counts_under_its_class_provisioner():
    objs = [csi_node("n0", {EBS: 1}), storage_class("late"), *bound("a"),
            pvc("pending", sc="late")]
    c, h = cluster_of(_nodes(None), objs, {"n0": [make_pod("pa").claim("a").obj()]})
    out = run_filter(NodeVolumeLimits(handle=h), make_pod("new").claim("pending").obj(),
                     c.table)
    assert out["n0"] is not None


def test_a_missing_claim_is_unresolvable_at_filter():
    c, h = cluster_of(_nodes(None), [csi_node("n0", {EBS: 1})])
    out = run_filter(NodeVolumeLimits(handle=h), make_pod("new").claim("gone").obj(), c.table)
    assert _reasons(out)["n0"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
        'looking up PVC default/gone: persistentvolumeclaim "gone" not found',))


def test_limits_follow_pods_as_they_come_and_go():
    c, h = cluster_of(_nodes(None), [csi_node("n0", {EBS: 1}), *bound("a"), *bound("b")])
    plugin = NodeVolumeLimits(handle=h)
    new = make_pod("new").claim("b").obj()
    assert run_filter(plugin, new, c.table)["n0"] is None
    holder = make_pod("pa").claim("a").obj()
    holder.node_name = "n0"
    c.add_pod(holder)
    assert run_filter(plugin, new, c.table)["n0"] is not None
    c.delete_pod("default", "pa")
    assert run_filter(plugin, new, c.table)["n0"] is None


def test_a_csi_node_update_changes_the_limit():
    c, h = cluster_of(_nodes(None), [csi_node("n0", {EBS: 1}), *bound("a"), *bound("b")],
                      {"n0": [make_pod("pa").claim("a").obj()]})
    plugin = NodeVolumeLimits(handle=h)
    new = make_pod("new").claim("b").obj()
    assert run_filter(plugin, new, c.table)["n0"] is not None
    from scheduler_core.api.storage import CSINode
    c.put_storage(CSINode.from_manifest(csi_node("n0", {EBS: 2})), update=True)
    assert run_filter(plugin, new, c.table)["n0"] is None


# --------------------------------------------------------------------------- VolumeRestrictions
@pytest.mark.parametrize(("mine", "theirs", "conflict"), [
    ({"gcePersistentDisk": {"pdName": "d"}}, {"gcePersistentDisk": {"pdName": "d"}}, True),
    ({"gcePersistentDisk": {"pdName": "d", "readOnly": True}},
     {"gcePersistentDisk": {"pdName": "d", "readOnly": True}}, False),
    ({"gcePersistentDisk": {"pdName": "d"}}, {"gcePersistentDisk": {"pdName": "e"}}, False),
    ({"awsElasticBlockStore": {"volumeID": "v", "readOnly": True}},
     {"awsElasticBlockStore": {"volumeID": "v", "readOnly": True}}, True),
    ({"iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0}},
     {"iscsi": {"targetPortal": "t", "iqn": "q", "lun": 1}}, True),
    ({"iscsi": {"targetPortal": "t", "iqn": "q", "readOnly": True}},
     {"iscsi": {"targetPortal": "t", "iqn": "q", "readOnly": True}}, False),
    ({"rbd": {"monitors": ["a", "b"], "pool": "p", "image": "i"}},
     {"rbd": {"monitors": ["b", "c"], "pool": "p", "image": "i"}}, True),
    ({"rbd": {"monitors": ["a"], "pool": "p", "image": "i"}},
     {"rbd": {"monitors": ["c"], "pool": "p", "image": "i"}}, False),
], ids=["gce-same", "gce-both-read-only", "gce-other-disk", "aws-always", "iscsi-same-iqn",
        "iscsi-read-only", "rbd-monitor-overlap", "rbd-no-overlap"])
def test_inline_disk_conflicts(mine, theirs, conflict):
    c, h = cluster_of(_nodes(None, None), [], {"n0": [make_pod("old").volume(theirs).obj()]})
    out = run_filter(VolumeRestrictions(handle=h), make_pod("new").volume(mine).obj(), c.table)
    assert out["n1"] is None
    assert _reasons(out)["n0"] == ((Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,))
                                   if conflict else None)


def test_a_read_write_once_pod_claim_in_use_rejects_every_node():
    objs = [*bound("solo", modes=("ReadWriteOncePod",))]
    objs[1]["spec"]["accessModes"] = ["ReadWriteOncePod"]
    c, h = cluster_of(_nodes(None, None), objs, {"n0": [make_pod("old").claim("solo").obj()]})
    out = run_filter(VolumeRestrictions(handle=h), make_pod("new").claim("solo").obj(), c.table)
    want = (Code.UNSCHEDULABLE, (ERR_REASON_RWOP_CONFLICT,))
    assert _reasons(out) == {"n0": want, "n1": want}


def test_preemption_what_ifs_adjust_the_read_write_once_pod_count():
    objs = [*bound("solo", modes=("ReadWriteOncePod",))]
    objs[1]["spec"]["accessModes"] = ["ReadWriteOncePod"]
    old = make_pod("old").claim("solo").obj()
    c, h = cluster_of(_nodes(None), objs, {"n0": [old]})
    plugin = VolumeRestrictions(handle=h)
    pod = make_pod("new").claim("solo").obj()
    state = CycleState()
    assert plugin.pre_filter(state, pod, c.table) == (None, None)
    idx = np.asarray([0])
    assert not plugin.filter(state, pod, c.table, idx).any()
    plugin.remove_pod(state, pod, old, 0)  # the victim would be gone
    assert plugin.filter(state, pod, c.table, idx) is None
    plugin.add_pod(state, pod, old, 0)
    assert not plugin.filter(state, pod, c.table, idx).any()


def test_restrictions_skip_pods_without_disks_or_shared_claims_and_reject_missing_claims():
    c, h = cluster_of(_nodes(None), [*bound("a")])
    plugin = VolumeRestrictions(handle=h)
    assert plugin.pre_filter(CycleState(), make_pod("p").claim("a").obj(), c.table)[1].is_skip
    _, status = plugin.pre_filter(CycleState(), make_pod("p").claim("x").obj(), c.table)
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                             ('persistentvolumeclaim "x" not found',))


# --------------------------------------------------------------------------- VolumeZone
@pytest.mark.parametrize(("pv_labels", "verdicts"), [
    ({ZONE: "us-a"}, {"n0": True, "n1": False, "n2": True}),
    ({ZONE: "us-a__us-b"}, {"n0": True, "n1": True, "n2": True}),
    ({BETA_ZONE: "us-b"}, {"n0": False, "n1": True, "n2": True}),
], ids=["one-zone", "multi-zone", "beta-label-on-volume"])
def test_zone_labels_of_the_volume_must_match_the_node(pv_labels, verdicts):
    c, h = cluster_of(_nodes("us-a", "us-b", None), bound("a", labels=pv_labels))
    out = run_filter(VolumeZone(handle=h), make_pod("p").claim("a").obj(), c.table)
    for node, ok in verdicts.items():
        assert (out[node] is None) is ok, node
        if not ok:
            assert (out[node].code, out[node].reasons) == (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had no available volume zone",))


def test_zone_prefilter_errors_and_skips():
    objs = [storage_class("late"), storage_class("now", late=False),
            pvc("waiting", sc="late"), pvc("unbound", sc="now"), pvc("classless"),
            pvc("dangling", volume="pv-missing"), *bound("plain")]
    c, h = cluster_of(_nodes("us-a"), objs)
    plugin = VolumeZone(handle=h)

    def pre(claim):
        return plugin.pre_filter(CycleState(), make_pod("p").claim(claim).obj(), c.table)[1]

    assert pre("waiting").is_skip and pre("plain").is_skip
    assert pre("unbound").reasons == ("PersistentVolume had no name",)
    assert pre("classless").reasons == (
        "PersistentVolumeClaim had no pv name and storageClass name",)
    assert pre("dangling").reasons == ('persistentvolume "pv-missing" not found',)
    assert pre("nope").reasons == ('persistentvolumeclaim "nope" not found',)


# --------------------------------------------------------------------------- VolumeBinding
def _zone_affinity(*zones: str) -> list:
    return [term(expr(ZONE, "In", *zones))]


def test_binding_prefilter_sorts_claims():
    objs = [storage_class("late"), storage_class("now", late=False), pvc("unbound", sc="now"),
            pvc("gone-soon", volume="pv-x", deleting=True), *bound("ok")]
    c, h = cluster_of(_nodes("us-a"), objs)
    plugin = VolumeBinding(handle=h)

    def pre(claim):
        return plugin.pre_filter(CycleState(), make_pod("p").claim(claim).obj(), c.table)[1]

    assert pre("ok") is None
    assert plugin.pre_filter(CycleState(), make_pod("p").obj(), c.table)[1].is_skip
    assert pre("unbound").reasons == ("pod has unbound immediate PersistentVolumeClaims",)
    assert pre("gone-soon").reasons == ('persistentvolumeclaim "gone-soon" is being deleted',)
    assert pre("nope").reasons == ('persistentvolumeclaim "nope" not found',)
    assert pre("nope").code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_bound_volume_node_affinity_and_missing_volumes():
    objs = [*bound("zonal", affinity=_zone_affinity("us-a")),
            pvc("dangling", volume="pv-gone")]
    c, h = cluster_of(_nodes("us-a", "us-b"), objs)
    plugin = VolumeBinding(handle=h)
    out = _reasons(run_filter(plugin, make_pod("p").claim("zonal").obj(), c.table))
    assert out == {"n0": None, "n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NODE_CONFLICT,))}
    # checking stops at the missing volume: nodes that passed the claims before it get
    # PVNotExist, the others only the affinity conflict
    pod = make_pod("p").claim("zonal").claim("dangling").obj()
    out = _reasons(run_filter(plugin, pod, c.table))
    assert out == {"n0": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_PV_NOT_EXIST,)),
                   "n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NODE_CONFLICT,))}


def test_delayed_binding_finds_the_smallest_fitting_volume_and_binds_it():
    objs = [storage_class("late", provisioner="kubernetes.io/no-provisioner"),
            pv("big", sc="late", size="10Gi"), pv("small", sc="late", size="2Gi"),
            pv("tiny", sc="late", size="1Mi"),
            pv("far", sc="late", size="2Gi", affinity=_zone_affinity("us-b")),
            pvc("want", sc="late", size="1Gi")]
    c, h = cluster_of(_nodes("us-a", "us-c"), objs)
    plugin = VolumeBinding(handle=h)
    pod = make_pod("p").claim("want").obj()
    assert run_filter(plugin, pod, c.table) == {"n0": None, "n1": None}
    state = CycleState()
    plugin.pre_filter(state, pod, c.table)
    assert plugin.reserve(state, pod, "n0") is None
    assert plugin.pre_bind(state, pod, "n0") is None
    assert c.pvs["small"].claim_ref == ("default", "want")
    assert c.pvcs["default/want"].volume_name == "small" and c.pvcs["default/want"].fully_bound
    assert c.pvs["big"].claim_ref is None


def test_delayed_binding_without_volumes_or_provisioner_is_a_bind_conflict():
    objs = [storage_class("static", provisioner="kubernetes.io/no-provisioner"),
            pv("far", sc="static", affinity=_zone_affinity("us-b")),
            pvc("want", sc="static")]
    c, h = cluster_of(_nodes("us-a", "us-b"), objs)
    out = _reasons(run_filter(VolumeBinding(handle=h), make_pod("p").claim("want").obj(),
                              c.table))
    assert out == {"n0": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_BIND_CONFLICT,)),
                   "n1": None}


def test_two_claims_cannot_take_the_same_volume():
    objs = [storage_class("static", provisioner="kubernetes.io/no-provisioner"),
            pv("only", sc="static"), pvc("a", sc="static"), pvc("b", sc="static")]
    c, h = cluster_of(_nodes("us-a"), objs)
    out = _reasons(run_filter(VolumeBinding(handle=h),
                              make_pod("p").claim("a").claim("b").obj(), c.table))
    assert out == {"n0": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_BIND_CONFLICT,))}


def test_provisioning_follows_allowed_topologies_and_capacity():
    objs = [storage_class("zonal", topologies=[{ZONE: ["us-a"]}]), pvc("want", sc="zonal")]
    c, h = cluster_of(_nodes("us-a", "us-b"), objs)
    plugin = VolumeBinding(handle=h)
    pod = make_pod("p").claim("want").obj()
    out = _reasons(run_filter(plugin, pod, c.table))
    assert out == {"n0": None, "n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_BIND_CONFLICT,))}
    from scheduler_core.api.manifest import parse_object
    c.add(parse_object({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                        "metadata": {"name": EBS}, "spec": {"storageCapacity": True}}))
    out = _reasons(run_filter(plugin, pod, c.table))
    assert out["n0"] == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NOT_ENOUGH_SPACE,))
    # provisioning is not modelled: PreBind says so
    c.delete("CSIDriver", EBS)
    state = CycleState()
    plugin.pre_filter(state, pod, c.table)
    plugin.reserve(state, pod, "n0")
    status = plugin.pre_bind(state, pod, "n0")
    assert status is not None and status.code == Code.ERROR
    assert "dynamic provisioning" in status.message


def test_a_claim_selected_for_another_node_is_a_bind_conflict_there():
    objs = [storage_class("late"),
            pvc("want", sc="late", annotations={"volume.kubernetes.io/selected-node": "n1"})]
    c, h = cluster_of(_nodes("us-a", "us-a"), objs)
    out = _reasons(run_filter(VolumeBinding(handle=h), make_pod("p").claim("want").obj(),
                              c.table))
    assert out == {"n0": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_BIND_CONFLICT,)),
                   "n1": None}


def test_bound_and_delayed_reasons_are_reported_together():
    objs = [storage_class("static", provisioner="kubernetes.io/no-provisioner"),
            *bound("zonal", affinity=_zone_affinity("us-a")), pvc("want", sc="static")]
    c, h = cluster_of(_nodes("us-b"), objs)
    out = _reasons(run_filter(VolumeBinding(handle=h),
                              make_pod("p").claim("zonal").claim("want").obj(), c.table))
    assert out == {"n0": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          (ERR_NODE_CONFLICT, ERR_BIND_CONFLICT))}


def test_limits_are_node_local_only_when_no_node_limits_the_pods_drivers():
    # the preemption and nominated-pod dry runs may then check many nodes in one call
    c, h = cluster_of(_nodes(None, None), [*bound("a"), csi_node("n1", {"other.csi": 1})])
    plugin = NodeVolumeLimits(handle=h)
    pod = make_pod("p").claim("a").obj()
    state = CycleState()
    plugin.pre_filter(state, pod, c.table)
    assert plugin.blind_in(state)
    from scheduler_core.api.storage import CSINode
    c.put_storage(CSINode.from_manifest(csi_node("n0", {EBS: 5})))
    state = CycleState()
    plugin.pre_filter(state, pod, c.table)
    assert not plugin.blind_in(state)


def test_a_volume_bound_by_one_pod_is_not_offered_to_the_next():
    objs = [storage_class("static", provisioner="kubernetes.io/no-provisioner"),
            pv("only", sc="static"), pvc("a", sc="static"), pvc("b", sc="static")]
    c, h = cluster_of(_nodes("us-a"), objs)
    plugin = VolumeBinding(handle=h)
    first, second = make_pod("p1").claim("a").obj(), make_pod("p2").claim("b").obj()
    assert run_filter(plugin, second, c.table) == {"n0": None}  # arrays built, then patched
    state = CycleState()
    plugin.pre_filter(state, first, c.table)
    plugin.reserve(state, first, "n0")  # assumed: already taken for the next pod
    assert _reasons(run_filter(plugin, second, c.table))["n0"] == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_BIND_CONFLICT,))
    plugin.unreserve(state, first, "n0")
    assert run_filter(plugin, second, c.table) == {"n0": None}
    plugin.reserve(state, first, "n0")
    assert plugin.pre_bind(state, first, "n0") is None  # bound in the cluster now
    assert c.pvs["only"].claim_ref == ("default", "a")
    assert run_filter(plugin, second, c.table)["n0"] is not None


def test_limits_follow_a_claim_rebound_to_another_volume():
    # the placed pod's claim moves from a CSI volume to an uncounted one: its node frees up
    local = pv("pv-local", claim=("default", "a"))
    del local["spec"]["csi"]
    local["spec"]["hostPath"] = {"path": "/x"}
    objs = [csi_node("n0", {EBS: 1}), *bound("a"), *bound("b"), local]
    c, h = cluster_of(_nodes(None), objs, {"n0": [make_pod("pa").claim("a").obj()]})
    plugin = NodeVolumeLimits(handle=h)
    new = make_pod("new").claim("b").obj()
    assert run_filter(plugin, new, c.table)["n0"] is not None
    from scheduler_core.api.storage import PersistentVolumeClaim
    c.put_storage(PersistentVolumeClaim.from_manifest(pvc("a", volume="pv-local")), update=True)
    assert run_filter(plugin, new, c.table)["n0"] is None
