"""HTTP extenders end to end: scheduler_core calling schedperf's extender server (a real
werkzeug server in its own process, workloads.extender_server) over loopback."""

from __future__ import annotations

import pytest

from scheduler_core.extender import EXTENDER_NAME, Extenders, scaled_score
from scheduler_core.extender.config import ExtenderConfig
from tests.builders import make_node, make_pod
from workloads.extender_server import ExtenderProcess
from workloads.extender_server.rule import REJECT_MESSAGE, TIER_LABEL


@pytest.fixture(scope="module")
def server():
    with ExtenderProcess("ok") as s:
        yield s


def tiered(*tiers: str, cpu: str = "4"):
    """One node per tier (n0, n1, ...), labelled example.com/tier=<tier> ("" unlabelled)."""
    out = []
    for i, tier in enumerate(tiers):
        b = make_node(f"n{i}").alloc(cpu=cpu, memory="32Gi", pods=110)
        if tier:
            b.label(TIER_LABEL, tier)
        out.append(b.obj())
    return out


def config(url: str, **fields) -> dict:
    ext = {"urlPrefix": url, "filterVerb": "filter", "prioritizeVerb": "prioritize",
           "weight": 1, **fields}
    return {"extenders": [ext]}


def test_filter_and_prioritize_decide_the_node(make_scheduler, server):
    cluster, sched = make_scheduler(tiered("", "excluded", "silver", "gold"),
                                    config(server.url))
    for i in range(3):
        cluster.add_pod(make_pod(f"p{i}").req(cpu="100m").obj())
    sched.run_until_idle()
    # the plugins score the empty nodes alike: the extender's 10 * 1 * 10 points pick gold
    assert {p.name: p.node_name for p in cluster.pods.values()} == {
        "p0": "n3", "p1": "n3", "p2": "n3"}
    stats = sched.extenders.all[0].stats
    assert stats.calls == {"filter": 3, "prioritize": 3}
    assert not stats.errors


def test_every_node_failed_by_the_extender_is_in_the_fit_error(make_scheduler, server):
    cluster, sched = make_scheduler(tiered("excluded", "excluded", "", cpu="1"),
                                    config(server.url))
    cluster.add_pod(make_pod("p").req(cpu="2").obj())
    cluster.add_pod(make_pod("q").req(cpu="500m").obj())
    sched.run_until_idle()
    assert cluster.pods["default/q"].node_name == "n2"
    cluster.add_pod(make_pod("r").req(cpu="800m").obj())
    sched.run_until_idle()
    # the filter plugins rejected nothing of n0/n1 and all of n2 (q's 500m); the extender
    # then failed n0 and n1
    assert sched.failures["default/r"].startswith(
        f"0/3 nodes are available: 1 Insufficient cpu, 2 {REJECT_MESSAGE}.")
    assert EXTENDER_NAME in sched.queue.get(cluster.pods["default/r"].uid).unschedulable_plugins


def test_node_cache_capable_extender_gets_names_and_reads_its_cache(make_scheduler):
    with ExtenderProcess("ok") as s:
        nodes = tiered("gold", "excluded", "silver")
        ext = Extenders([ExtenderConfig(s.url, filter_verb="filter",
                                        prioritize_verb="prioritize", weight=2,
                                        node_cache_capable=True)])
        s.cache_nodes(ext.node_manifests(nodes))
        cluster, sched = make_scheduler(nodes, extenders=ext)
        cluster.add_pod(make_pod("p").req(cpu="100m").obj())
        sched.run_until_idle()
        assert cluster.pods["default/p"].node_name == "n0"
        assert s.stats()["calls"] == {"filter": 1, "prioritize": 1}
        args = ext.all[0]._args({}, ["n0"], lambda: [])
        assert args["nodenames"] == ["n0"] and args["nodes"] is None


def _down_url() -> str:
    with ExtenderProcess("ok") as s:
        url = s.url
    return url  # nothing listens there any more


@pytest.mark.parametrize("ignorable", [False, True])
def test_an_extender_that_is_down(make_scheduler, ignorable):
    url = _down_url()
    cluster, sched = make_scheduler(tiered("", ""), config(url, ignorable=ignorable))
    cluster.add_pod(make_pod("p").req(cpu="100m").obj())
    sched.run_until_idle()
    stats = sched.extenders.all[0].stats
    if ignorable:  # the cycle goes on without it, and counts the failure
        assert cluster.pods["default/p"].node_name in ("n0", "n1")
        assert stats.ignored == {"filter": 1, "prioritize": 1}  # scoring went on without it
        assert stats.last_error.startswith(f'Post "{url}/prioritize": dial tcp')
    else:  # an error: the pod stays pending with upstream's message naming the extender
        assert not cluster.pods["default/p"].node_name
        assert sched.failures["default/p"] == (
            f'Post "{url}/filter": dial tcp 127.0.0.1:{url.rsplit(":", 1)[1]}: connect: '
            "connection refused")
        assert "filter" not in stats.ignored


@pytest.mark.parametrize("ignorable", [False, True])
def test_a_hanging_extender_times_out(make_scheduler, ignorable):
    with ExtenderProcess("hang") as s:
        cluster, sched = make_scheduler(
            tiered("", ""), config(s.url, httpTimeout="200ms", ignorable=ignorable))
        cluster.add_pod(make_pod("p").req(cpu="100m").obj())
        sched.run_until_idle(max_attempts=1)
        stats = sched.extenders.all[0].stats
        message = (f'Post "{s.url}/{{verb}}": context deadline exceeded (Client.Timeout '
                   "exceeded while awaiting headers)")
        if ignorable:
            assert cluster.pods["default/p"].node_name
            assert stats.ignored == {"filter": 1, "prioritize": 1}
            assert stats.last_error == message.format(verb="prioritize")
        else:
            assert not cluster.pods["default/p"].node_name
            assert sched.failures["default/p"] == message.format(verb="filter")


@pytest.mark.parametrize(("mode", "message"), [
    ("error", "failed filter with extender at URL {url}/filter, code 500"),
    ("fail", "filter refused (fail mode)"),
])
def test_error_answers_end_the_cycle(make_scheduler, mode, message):
    with ExtenderProcess(mode) as s:
        cluster, sched = make_scheduler(tiered(""), config(s.url))
        cluster.add_pod(make_pod("p").req(cpu="100m").obj())
        sched.run_until_idle(max_attempts=1)
        assert sched.failures["default/p"] == message.format(url=s.url)


def test_prioritize_errors_give_no_score_even_when_not_ignorable(make_scheduler):
    with ExtenderProcess("error") as s:
        ext = {"urlPrefix": s.url, "prioritizeVerb": "prioritize", "weight": 5}
        cluster, sched = make_scheduler(tiered("", ""), {"extenders": [ext]})
        cluster.add_pod(make_pod("p").req(cpu="100m").obj())
        sched.run_until_idle()
        assert cluster.pods["default/p"].node_name
        assert sched.extenders.all[0].stats.ignored == {"prioritize": 1}


def test_the_binding_extender_binds_instead_of_the_bind_plugins(make_scheduler):
    with ExtenderProcess("ok") as s:
        ext = {"urlPrefix": s.url, "bindVerb": "bind"}
        cluster, sched = make_scheduler(tiered(""), {"extenders": [ext]})
        cluster.add_pod(make_pod("p").req(cpu="100m").obj())
        sched.run_until_idle()
        assert cluster.pods["default/p"].node_name == "n0"
        assert s.stats() == {"calls": {"bind": 1}, "bindings": 1}
    with ExtenderProcess("fail") as s:  # a bind error: the pod is not bound, retried
        cluster, sched = make_scheduler(tiered(""), {"extenders": [
            {"urlPrefix": s.url, "bindVerb": "bind"}]})
        cluster.add_pod(make_pod("p").req(cpu="100m").obj())
        sched.run_until_idle(max_attempts=1)
        assert not cluster.pods["default/p"].node_name
        assert sched.failures["default/p"] == "bind refused (fail mode)"
        assert "default/p" not in cluster.assumed


def test_managed_resources_choose_the_pods_and_can_be_ignored_by_the_scheduler(
        make_scheduler, server):
    gpu = "example.com/gpu"
    ext = {"urlPrefix": server.url, "filterVerb": "filter",
           "managedResources": [{"name": gpu, "ignoredByScheduler": True}]}
    cluster, sched = make_scheduler(tiered("excluded", ""), {"extenders": [ext]})
    cluster.add_pod(make_pod("plain").req(cpu="100m").obj())
    sched.run_until_idle()
    stats = sched.extenders.all[0].stats
    assert stats.calls == {}  # not interested in a pod without the resource
    # no node has example.com/gpu: NodeResourcesFit ignores it (ignoredByScheduler), the
    # extender is asked and keeps only n1
    cluster.add_pod(make_pod("gpu").req({"cpu": "100m", gpu: "1"}).obj())
    sched.run_until_idle()
    assert cluster.pods["default/gpu"].node_name == "n1"
    assert stats.calls == {"filter": 1}


def test_ignorable_extenders_are_called_last():
    cfgs = [ExtenderConfig("http://a", filter_verb="f", ignorable=True),
            ExtenderConfig("http://b", filter_verb="f"),
            ExtenderConfig("http://c", filter_verb="f", ignorable=True),
            ExtenderConfig("http://d", filter_verb="f")]
    assert [e.name for e in Extenders(cfgs).all] == ["http://b", "http://d", "http://a",
                                                     "http://c"]


def test_scores_are_scaled_to_the_plugins_range():
    assert scaled_score(10, 1) == 100
    assert scaled_score(5, 3) == 150
    assert scaled_score(0, 9) == 0


def _preemption_cluster(make_scheduler, extender: dict, server=None):
    """n0 (tier excluded) and n1, 1 CPU each, each full with a low-priority pod; a
    high-priority pod asks for 1 CPU."""
    nodes = tiered("excluded", "", cpu="1")
    cluster, sched = make_scheduler(nodes, {"extenders": [extender]})
    if server is not None:
        server.cache_nodes(sched.extenders.node_manifests(nodes))
    for i in range(2):
        cluster.add_pod(make_pod(f"v{i}").req(cpu="1").priority(0).node(f"n{i}").obj())
    cluster.add_pod(make_pod("high").req(cpu="1").priority(100).obj())
    return cluster, sched


def test_a_preempting_extender_chooses_among_the_candidates(make_scheduler):
    with ExtenderProcess("ok") as s:
        cluster, sched = _preemption_cluster(
            make_scheduler, {"urlPrefix": s.url, "preemptVerb": "preempt",
                             "nodeCacheCapable": True}, s)
        sched.run_until_idle()
        # TierGate drops the candidate on the excluded node: the victim is v1, on n1
        assert cluster.pods["default/high"].node_name == "n1"
        assert "default/v0" in cluster.pods and "default/v1" not in cluster.pods
        assert s.stats()["calls"] == {"preempt": 1}


@pytest.mark.parametrize("ignorable", [False, True])
def test_a_failing_preempting_extender(make_scheduler, ignorable):
    with ExtenderProcess("error") as s:
        cluster, sched = _preemption_cluster(
            make_scheduler, {"urlPrefix": s.url, "preemptVerb": "preempt",
                             "ignorable": ignorable})
        sched.run_until_idle(max_attempts=None if ignorable else 1)
        if ignorable:  # preemption goes on without it: one of the victims is gone
            assert len([k for k in ("default/v0", "default/v1") if k in cluster.pods]) == 1
            assert cluster.pods["default/high"].node_name
            assert sched.extenders.all[0].stats.ignored == {"preempt": 1}
        else:  # preemption fails with the extender's error; no pod is evicted
            assert sched.failures["default/high"].endswith(
                f"failed preempt with extender at URL {s.url}/preempt, code 500")
            assert "default/v0" in cluster.pods and "default/v1" in cluster.pods


def test_victims_named_by_uid_must_be_on_their_node():
    from scheduler_core.extender import _victims_of

    ext = Extenders([ExtenderConfig("http://e", preempt_verb="preempt")]).all[0]
    pod = make_pod("v").node("n1").obj()
    pods_on = {"n1": [pod]}.get
    assert _victims_of(ext, {"n1": ([pod.uid], 0)}, pods_on) == {"n1": ([pod], 0)}
    with pytest.raises(Exception, match=r"extender: http://e claims to preempt pod \(UID: "
                       r"&\{nope\}\) on node: n1, but the pod is not found on that node"):
        _victims_of(ext, {"n1": (["nope"], 0)}, pods_on)


def test_the_server_answers_more_calls_than_a_pipe_holds_log_lines():
    """The server writes no line per request, and its stderr is a file: a pipe nobody read
    once filled after ~900 logged requests and blocked the server for good."""
    import httpx

    with ExtenderProcess("ok") as s, httpx.Client(timeout=30) as client:
        body = '{"pod": {}, "nodes": null, "nodenames": ["a"]}'
        codes = {client.post(s.url + "/filter", content=body).status_code
                 for _ in range(1200)}
        assert codes == {200}
