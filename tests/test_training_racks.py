"""GB200 / GB300 NVL72 racks as 72-GPU NVLink domains in training plans (issue 34): TP, EP, CP
and the in-rack share of DP traffic on NVLink, the network only between racks; plans count
racks; every plan says which fabric each collective crosses."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from advisor import webapi
from advisor.core.errors import AdvisorError
from advisor.data.catalog import load_catalog
from advisor.perf import cluster, network, parallel, training
from advisor.perf.parallel import Layout

ROOT = Path(__file__).resolve().parent.parent
CAT = load_catalog()
IB = CAT.network("ib-ndr-400")
B200 = CAT.gpu("b200")
GB200 = CAT.gpu("gb200")
GB300 = CAT.gpu("gb300")
Q235 = CAT.model("qwen3-235b-a22b").spec
DSV3 = CAT.model("deepseek-v3").spec


def test_an_nvl72_rack_is_one_72_gpu_domain_and_hgx_nodes_hold_8():
    # catalog/gpus/gb200.yaml and gb300.yaml: scale_up nvlink5, domain_size 72
    assert parallel.domain_of(GB200) == (72, "rack")
    assert parallel.domain_of(GB300) == (72, "rack")
    assert parallel.domain_of(B200) == (8, "node")
    assert parallel.domain_of(CAT.gpu("b300")) == (8, "node")  # HGX B300: 8 on one board
    # a job past one rack spreads evenly over the fewest racks it splits into
    assert parallel.gpus_per_domain(GB200, 64) == 64
    assert parallel.gpus_per_domain(GB200, 144) == 72  # 2 racks
    assert parallel.gpus_per_domain(GB200, 256) == 64  # 4 racks of 64
    assert parallel.gpus_per_domain(GB200, 1024) == 64  # 16 racks of 64
    assert parallel.gpus_per_domain(B200, 256) == 8
    lay = Layout(dp=144, gpus_per_node=72, domain="rack").validated()
    assert (lay.nodes, lay.to_dict()["domain"]) == (2, "rack")
    with pytest.raises(AdvisorError) as e:
        Layout(dp=100, gpus_per_node=72, domain="rack").validated()
    assert e.value.key == "layout.whole_nodes" and "racks" in str(e.value)
    with pytest.raises(AdvisorError) as e:
        Layout(dp=8, domain="pod").validated()
    assert e.value.field == "domain"


def _ep64(spec, gpu):
    per = parallel.gpus_per_domain(gpu, 64)
    _, kind = parallel.domain_of(gpu)
    lay = Layout(dp=64, ep=64, gpus_per_node=per, domain=kind, micro_batches=16, sharding="zero1")
    return training.train_step(
        spec, gpu, lay, seq=4096, precision="mxfp8", checkpointing="full", inter=IB, imbalance=1.0
    )


@pytest.mark.parametrize("spec", [Q235, DSV3], ids=["qwen3-235b-a22b", "deepseek-v3"])
def test_ep64_in_one_rack_uses_nvlink_and_on_hgx_nodes_the_network(spec):
    rack = _ep64(spec, GB200)
    hgx = _ep64(spec, B200)
    # one GB200 rack: the all-to-all and the gradients never leave NVLink
    assert rack.layout.nodes == 1 and rack.layout.domain == "rack"
    assert rack.collectives["ep"] == {"ranks": 64, "over": "scale-up", "fabric": "nvlink5"}
    assert rack.collectives["dp"]["over"] == "scale-up"
    # eight 8-GPU B200 nodes: 56 of the 64 shares of each all-to-all cross the 400 Gb/s NIC
    assert hgx.layout.nodes == 8 and hgx.layout.domain == "node"
    assert hgx.collectives["ep"] == {
        "ranks": 64,
        "over": "scale-up+network",
        "fabric": "nvlink5 + ib-ndr-400",
    }
    # the time differs as the fabrics do: the all-to-all is bound by the slower side, the NIC
    intra = network.intra_node_fabric(GB200)
    ratio = intra.bytes_per_s / IB.bytes_per_s * (56 / 64) / (63 / 64)
    got = hgx.parts_s["ep_comm"] / rack.parts_s["ep_comm"]
    assert got == pytest.approx(ratio, rel=0.15)
    assert hgx.tokens_per_s_per_gpu < rack.tokens_per_s_per_gpu / 2


def test_a_plan_on_144_gb200_gpus_is_two_racks():
    counts = cluster.gpu_counts(1024, 72, rack=True)
    assert {64, 72, 128, 144, 216, 256, 288} <= set(counts)
    assert cluster.gpu_counts(64, 8) == (1, 2, 4, 8, 16, 24, 32, 48, 64)  # 8-GPU nodes as before
    p = cluster.plan(
        Q235,
        GB200,
        tokens=10**11,
        seq=4096,
        network=IB,
        precision="mxfp8",
        max_gpus=144,
        expert_parallel=8,
    )
    assert (p.domain, p.domain_gpus) == ("rack", 72)
    by_count = {o.gpus: o for o in p.options}
    two = by_count[144]
    assert (two.nodes, two.layout.gpus_per_node, two.layout.domain) == (2, 72, "rack")
    assert two.to_dict()["domain"] == "rack"
    assert two.step.collectives["ep"]["over"] == "scale-up"
    assert p.to_dict()["chosen"]["step"]["collectives"]


def test_without_a_network_a_rack_plan_stays_in_one_rack():
    p = cluster.plan(Q235, GB200, tokens=10**10, seq=4096, precision="mxfp8", max_gpus=256)
    assert p.options and max(o.gpus for o in p.options) <= 72
    assert all(o.nodes == 1 for o in p.options)


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "advisor", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_time_train_and_plan_say_where_each_collective_runs():
    r = _cli(
        "time", "train", "--model", "qwen3-235b-a22b", "--gpu", "gb200", "--dp", "64",
        "--ep", "64", "--micro-batches", "16", "--precision", "mxfp8", "--sharding", "zero1",
        "--checkpointing", "full", "--network", "ib-ndr-400",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "1 rack(s) of 64 GPUs" in r.stdout
    assert "EP 64 on nvlink5 (scale-up)" in r.stdout
    r = _cli(
        "time", "train", "--model", "qwen3-235b-a22b", "--gpu", "b200", "--dp", "64",
        "--ep", "64", "--micro-batches", "16", "--precision", "mxfp8", "--sharding", "zero1",
        "--checkpointing", "full", "--network", "ib-ndr-400", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    step = json.loads(r.stdout)["step"]
    assert step["layout"]["domain"] == "node" and step["layout"]["nodes"] == 8
    assert step["collectives"]["ep"]["fabric"] == "nvlink5 + ib-ndr-400"
    r = _cli(
        "time", "plan", "--model", "qwen3-235b-a22b", "--gpu", "gb200", "--tokens", "1e11",
        "--precision", "mxfp8", "--ep", "8", "--max-gpus", "144",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "racks x GPUs" in r.stdout and "2 x 72" in r.stdout
    assert "collectives (rack = 72 GPUs on one NVLink domain)" in r.stdout


def test_the_cluster_calculator_plans_racks():
    out = webapi.run(
        "cluster",
        {
            "model": "qwen3-235b-a22b",
            "gpu": "gb200",
            "tokens": "1e11",
            "precision": "mxfp8",
            "max_gpus": 144,
            "expert_parallel": 8,
            "deadline_days": "",
        },
    )
    assert "error" not in out, out
    assert (out["domain"], out["domain_gpus"]) == ("rack", 72)
    two = next(o for o in out["options"] if o["gpus"] == 144)
    assert (two["nodes"], two["domain"]) == (2, "rack")
    assert two["step"]["collectives"]["ep"]["over"] == "scale-up"


def _render_cluster(result: dict, lang: str) -> str:
    """The cluster calculator's result as the browser renders it (calcruntime/browser/render.mjs
    `renderResult` under Node), with the build's `calc.*` strings of `lang`."""
    from hooks.templating import load_strings

    strings = load_strings(ROOT / "templates" / "i18n")[lang]
    strings = {k: v for k, v in strings.items() if k.startswith(("calc.", "err."))}
    script = """
const m = await import(process.argv[1]);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { result, strings, lang } = JSON.parse(input);
process.stdout.write(m.renderResult("cluster", result, { ...strings, lang }));
"""
    r = subprocess.run(
        ["node", "--input-type=module", "-e", script, (ROOT / "calcruntime/browser/render.mjs").as_uri()],
        input=json.dumps({"result": result, "strings": strings, "lang": lang}),
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return html.unescape(r.stdout)


@pytest.mark.node
@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_the_cluster_calculator_shows_which_fabric_each_collective_uses():
    """Issue 34/35: the web API's plan carries, per collective, its ranks, scale-up / network and
    fabric; the calculator (both languages) shows them under the chosen plan."""
    params = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "tokens": "1e12", "deadline_days": 30}
    out = json.loads(webapi.dumps(webapi.run("cluster", params)))
    coll = out["chosen"]["step"]["collectives"]
    lay = out["chosen"]["layout"]
    assert coll["tp"] == {"ranks": lay["tp"], "over": "scale-up", "fabric": "nvlink4"}
    assert coll["dp"]["ranks"] == lay["dp"] and "ib-ndr-400" in coll["dp"]["fabric"]
    assert coll["dp"]["over"] in ("network", "scale-up+network")
    want = {
        "en": ["The plan's communication", "TP (tensor parallelism)", "DP (data parallelism)",
               "scale-up: inside one domain", "one node", "Fabric"],
        "az": ["Planın rabitəsi", "TP (tenzor paralelliyi)", "DP (məlumat paralelliyi)",
               "daxili birləşmə (scale-up): bir domen daxilində", "bir qovşaq", "Qarşılıqlı əlaqə"],
    }  # fmt: skip
    for lang, words in want.items():
        page = _render_cluster(out, lang)
        table = page[page.index('data-out="collectives"') :]
        table = table[: table.index("</table>")]
        for w in words:
            assert w in page, (lang, w)
        assert "nvlink4" in table and "ib-ndr-400" in table
        assert table.count("<tr>") == 1 + len(coll)  # the head and one row per group

    # a GB200 NVL72 plan: EP inside the 72-GPU rack on NVLink 5, named as racks
    rack = json.loads(webapi.dumps(webapi.run("cluster", {
        "model": "qwen3-235b-a22b", "gpu": "gb200", "tokens": "1e11", "precision": "mxfp8",
        "max_gpus": 144, "expert_parallel": 8, "deadline_days": ""})))  # fmt: skip
    assert rack["chosen"]["step"]["collectives"]["ep"]["fabric"] == "nvlink5"
    for lang, words in {
        "en": ["one NVL72 rack", "EP (expert parallelism)", "nvlink5"],
        "az": ["bir NVL72 server şkafı", "EP (ekspert paralelliyi)", "nvlink5", "72 QPU"],
    }.items():
        page = _render_cluster(rack, lang)
        for w in words:
            assert w in page, (lang, w)


def test_every_collective_group_and_domain_is_translated():
    """render.mjs names the groups (calc.cl.g.<group>) and where they run (calc.cl.over.<...>)
    built from advisor.perf.training.collective_domains' keys: all in both languages."""
    from hooks.templating import load_strings

    strings = load_strings(ROOT / "templates" / "i18n")
    js = (ROOT / "calcruntime/browser/render.mjs").read_text(encoding="utf-8")
    groups = ("tp", "cp", "pp", "dp", "ep", "expert_dp")
    assert all(f'"{g}"' in js for g in groups)
    overs = {training.SCALE_UP: "scale_up", training.NETWORK: "network", training.BOTH: "both"}
    assert all(f'"{o}": "{k}"' in js or f'{o}: "{k}"' in js for o, k in overs.items())
    for lang in ("az", "en"):
        keys = [f"calc.cl.g.{g}" for g in groups] + [f"calc.cl.over.{k}" for k in overs.values()]
        assert [k for k in keys if k not in strings[lang]] == [], lang
