"""ImageLocality: spread-scaled image sizes, thresholds per container, name normalisation.

Numbers by hand: MB = 2**20, min threshold 23 MB = 24117248, max 1000 MB per container.
250 MB on 2 of 3 nodes scales to int(262144000 * 2/3) = 174762666.
"""

from __future__ import annotations

from scheduler_core.plugins.image_locality import ImageLocality
from tests.builders import make_node, make_pod, run_score, table_of

MB = 1024 * 1024
PLUGIN = ImageLocality()


def _nodes():
    return [make_node("n1").image(250 * MB, "nginx:latest").image(100 * MB, "busybox:latest")
            .image(2000 * MB, "big:1").image(10 * MB, "tiny:1").obj(),
            make_node("n2").image(250 * MB, "nginx:latest").image(100 * MB, "busybox:latest")
            .image(2000 * MB, "big:1").image(10 * MB, "tiny:1").obj(),
            make_node("n3").image(100 * MB, "busybox:latest").image(2000 * MB, "big:1")
            .image(10 * MB, "tiny:1").obj()]


def test_one_container_spread_scaled():
    # 100 * (174762666 - 24117248) // (1048576000 - 24117248) = 14
    got = run_score(PLUGIN, make_pod().images("nginx").obj(), table_of(_nodes()))
    assert got == {"n1": 14, "n2": 14, "n3": 0}


def test_thresholds():
    table = table_of(_nodes())
    assert run_score(PLUGIN, make_pod().images("big:1").obj(), table) == \
        {"n1": 100, "n2": 100, "n3": 100}
    assert run_score(PLUGIN, make_pod().images("tiny:1").obj(), table) == \
        {"n1": 0, "n2": 0, "n3": 0}


def test_max_threshold_scales_with_containers_and_duplicates_count_twice():
    # 2 * 174762666 = 349525332 over a 2000 MB maximum: 100 * 325408084 // 2073034752 = 15
    got = run_score(PLUGIN, make_pod().images("nginx", "nginx:latest").obj(),
                    table_of(_nodes()))
    assert got == {"n1": 15, "n2": 15, "n3": 0}


def test_init_containers_count():
    # busybox on all nodes adds 104857600: 100 * (279620266 - 24117248) // 2073034752 = 12
    pod = make_pod().init_image("busybox").images("nginx").obj()
    got = run_score(PLUGIN, pod, table_of(_nodes()))
    assert got["n1"] == 12
    # n3 has only busybox: 100 * (104857600 - 24117248) // 2073034752 = 3
    assert got["n3"] == 3


def test_tags_and_registry_ports_normalise_like_upstream():
    nodes = [make_node("n").image(500 * MB, "localhost:5000/app:latest", "nginx:1.25").obj()]
    table = table_of(nodes)
    assert run_score(PLUGIN, make_pod().images("localhost:5000/app").obj(), table)["n"] > 0
    assert run_score(PLUGIN, make_pod().images("nginx:1.25").obj(), table)["n"] > 0
    assert run_score(PLUGIN, make_pod().images("nginx").obj(), table)["n"] == 0


def test_no_normalize_and_no_images_anywhere():
    assert not hasattr(PLUGIN, "normalize")
    table = table_of([make_node("a").obj()])
    assert run_score(PLUGIN, make_pod().images("x").obj(), table) == {"a": 0}
