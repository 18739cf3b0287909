"""advisor.advice.recommend: ranking accelerator x count by fit, time and cost, with rejection reasons."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from advisor.advice import recommend as rec
from advisor.core.errors import AdvisorError
from advisor.core.units import GIB
from advisor.data import systems
from advisor.data.catalog import load_catalog
from advisor.memory import estimate as mem
from advisor.perf import serving_fit as sfit

MODELS = load_catalog()


def gpu(gid, memory_gib, price=None, bf16=400.0, bw=2000.0, tier="datacenter", link=900.0):
    return SimpleNamespace(
        id=gid,
        name=gid.upper(),
        vendor="nvidia",
        tier=tier,
        memory_gib=memory_gib,
        memory_bytes=int(memory_gib * 10**9),
        memory_bandwidth_gb_per_s=bw,
        peak_tflops={"bf16": bf16, "fp16": bf16, "fp32": bf16 / 10} if bf16 else {"fp16": 100.0},
        tdp_w=700.0,
        interconnect="nvlink4",
        interconnect_gb_per_s=link,
        price_usd=price,
        doc={},
    )


def offer(gpu_id, price, provider="p1", gpi=1):
    return SimpleNamespace(
        provider=provider,
        gpu_id=gpu_id,
        instance=f"{gpu_id}-x{gpi}",
        gpus_per_instance=gpi,
        region="eu",
        on_demand_usd_per_gpu_hour=price,
        spot_usd_per_gpu_hour=None,
        reserved_usd_per_gpu_hour=None,
        reserved_term_months=None,
        source_url="https://example.org",
        read="2026-12-01",
        doc={},
    )


CATALOG = SimpleNamespace(
    models=MODELS.models,
    gpus=(
        gpu("big80", 80.0, price=30_000.0),
        gpu("small16", 16.0, price=2_000.0, bf16=100.0, bw=500.0, tier="consumer"),
        gpu("orphan", 80.0),  # no offer, no price
        gpu("old", 32.0, price=5_000.0, bf16=None),  # no bf16 rate
    ),
    offers=(offer("big80", 2.0), offer("small16", 0.5), offer("old", 0.3)),
    currency=None,
    model=MODELS.model,
)
LLAMA8 = MODELS.model("llama-3.1-8b").spec


def by(recs, gid, count):
    return next(r for r in recs if r.gpu_id == gid and r.count == count)


def test_inference_fit_and_vram_reason():
    w = rec.Workload(model=LLAMA8, task="inference", batch=1, seq=2048)
    recs = rec.recommend(w, CATALOG)
    assert len(recs) == 4 * 4
    # sized as a continuous-batching server (advisor.perf.serving_fit), not a static prefill
    i, o = sfit.split_context(2048)
    need = sfit.fit(
        LLAMA8,
        next(g for g in CATALOG.gpus if g.id == "small16"),
        gpus=1,
        concurrency=1,
        input_tokens=i,
        output_tokens=o,
        tensor_parallel=1,
    ).total_bytes
    small = by(recs, "small16", 1)
    assert not small.ok and small.reasons[0].key == "recommend.vram"
    assert small.reasons[0].message == (
        f"needs {need / GIB:.1f} GiB per GPU, has {16e9 / GIB:.1f} GiB"
    )
    assert small.reasons[0].params["has_gib"] == round(16e9 / GIB, 1)
    # two small cards fit with tensor parallelism
    two = by(recs, "small16", 2)
    assert two.ok and two.sharding == "tp2" and two.tensor_parallel == 2
    big = by(recs, "big80", 1)
    assert big.ok and big.sharding == "single" and big.bound == "memory_bandwidth"
    assert by(recs, "big80", 4).sharding == "replicas4"
    orphan = by(recs, "orphan", 1)
    assert not orphan.ok and orphan.reasons[0].message == "no cloud offer and no price"
    assert orphan.reasons[0].key == "recommend.no_offer_no_price"
    old = by(recs, "old", 1)
    assert not old.ok and old.reasons[0].key == "gpu.precision_unsupported"


def test_ranking_is_deterministic_and_ordered():
    w = rec.Workload(model=LLAMA8, task="inference", batch=4, seq=1024)
    a = rec.recommend(w, CATALOG)
    b = rec.recommend(w, CATALOG)
    assert a == b
    assert [r.rank for r in a] == list(range(1, len(a) + 1))
    oks = [r for r in a if r.ok]
    assert oks and all(r.ok for r in a[: len(oks)])
    assert [r.cost for r in oks] == sorted(r.cost for r in oks)


def test_rent_cost_and_per_million_tokens():
    w = rec.Workload(model=LLAMA8, task="inference", acquire="rent", horizon_months=1)
    r = by(rec.recommend(w, CATALOG), "big80", 1)
    # serving runs all hours by default: 2.0 USD * 730 h
    assert r.mode == "rent" and r.cost == pytest.approx(2.0 * 730)
    assert r.per_million_tokens == pytest.approx(2.0 / (r.tokens_per_s * 3600) * 1e6)
    # own only: cards bought, no offer needed
    w_own = rec.Workload(model=LLAMA8, task="inference", acquire="own", horizon_months=12)
    o = by(rec.recommend(w_own, CATALOG), "big80", 1)
    # the 30,000 USD card, its power, less its resale (cost.DEFAULT_RESALE_FRACTION)
    assert o.mode == "own" and o.purchase == 30_000 and o.cost > 30_000 * 0.8


def test_target_budget_and_deadline_reasons():
    w = rec.Workload(model=LLAMA8, task="inference", target_tokens_per_s=1e6)
    r = by(rec.recommend(w, CATALOG), "big80", 1)
    assert r.reasons[0].key == "recommend.too_slow_tokens"
    assert re.fullmatch(r"reaches [\d,]+ tokens/s, target 1,000,000", r.reasons[0].message)
    w = rec.Workload(model=LLAMA8, task="inference", budget=10.0, acquire="rent")
    r = by(rec.recommend(w, CATALOG), "big80", 1)
    assert r.reasons[0].key == "recommend.over_budget"
    assert r.reasons[0].message.endswith("budget 10 USD")
    w = rec.Workload(
        model=MODELS.model("llama-3.2-1b").spec,
        task="train",
        batch=1,
        seq=512,
        dataset_tokens=10**12,
        deadline_hours=1.0,
    )
    r = by(rec.recommend(w, CATALOG), "big80", 1)
    assert r.reasons[0].key == "recommend.too_slow_hours"
    assert r.hours > 1.0


def test_training_picks_the_simplest_sharding_that_fits():
    w = rec.Workload(
        model=LLAMA8, task="train", batch=1, seq=512, dataset_tokens=10**8, acquire="rent"
    )
    recs = rec.recommend(w, CATALOG)
    one = by(recs, "big80", 1)
    assert not one.ok and one.reasons[0].key == "recommend.vram"
    setups = {
        s: mem.training_memory(
            mem.TrainingSetup(
                model=LLAMA8, batch=1, seq=512, precision="amp-bf16", gpus=8, sharding=s
            )
        ).total_bytes
        for s in ("ddp", "zero3")
    }
    eight = by(recs, "big80", 8)
    expected = "ddp" if setups["ddp"] <= 80e9 else "zero3"
    assert eight.ok and eight.sharding == expected
    assert eight.hours > 0 and eight.run_cost == pytest.approx(eight.hours * 8 * 2.0)


def test_bad_workload_names_the_field():
    for kwargs, field in (
        (dict(task="serve"), "task"),
        (dict(batch=0), "batch"),
        (dict(budget=-1.0), "budget"),
        (dict(utilisation=1.5), "utilisation"),
        (dict(acquire="lease"), "acquire"),
        (dict(task="train", deadline_hours=5.0), "dataset_tokens"),
    ):
        with pytest.raises(AdvisorError) as e:
            rec.recommend(rec.Workload(model=LLAMA8, **kwargs), CATALOG)
        assert e.value.field == field


def test_real_catalog_every_row_has_a_reason_or_a_cost():
    cat = load_catalog()
    if not cat.gpus:
        pytest.skip("catalog/gpus is empty")
    w = rec.Workload(model=LLAMA8, task="inference", batch=8, seq=4096)
    recs = rec.recommend(w, cat)
    assert len(recs) == 4 * len(cat.gpus)
    assert any(r.ok for r in recs)
    for r in recs:
        if r.ok:
            assert r.cost is not None and r.cost > 0 and r.tokens_per_s > 0
        else:
            assert r.reasons and r.reasons[0].key and r.reasons[0].message


def test_cli_recommend(monkeypatch, capsys):
    import json

    import advisor.commands.recommend as cmd
    from advisor.cli import main

    monkeypatch.setattr(cmd, "load_catalog", lambda root=None: CATALOG)
    argv = ["recommend", "--model", "llama-3.1-8b", "--task", "inference", "--no-bench"]
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 16 and rows[0]["ok"] and rows[0]["rank"] == 1
    assert main([*argv, "--all"]) == 0
    out = capsys.readouterr().out
    assert "x small16                 1: needs" in out and "no cloud offer and no price" in out
    assert main(["recommend", "--model", "llama-3.1-8c"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "llama-3.1-8b" in err[0]
    assert main([*argv, "--budget", "-5"]) == 2
    assert "budget" in capsys.readouterr().err


def test_cli_on_the_real_catalog(capsys):
    import json

    from advisor.cli import main

    cat = load_catalog()
    if not cat.offers:
        pytest.skip("catalog/clouds is empty")
    argv = ["recommend", "--model", "llama-3.1-70b", "--batch", "8", "--seq", "4096"]
    assert main([*argv, "--acquire", "rent", "--no-bench", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 4 * len(cat.gpus)  # --max-gpus 8: 1, 2, 4, 8
    h100 = next(r for r in rows if r["gpu_id"] == "h100-sxm" and r["count"] == 1)
    i, o = sfit.split_context(4096)
    need = sfit.fit(
        MODELS.model("llama-3.1-70b").spec,
        cat.gpu("h100-sxm"),
        gpus=1,
        concurrency=8,
        input_tokens=i,
        output_tokens=o,
        tensor_parallel=1,
    ).total_bytes
    assert h100["reasons"][0]["message"] == f"needs {need / GIB:.1f} GiB per GPU, has 80.0 GiB"
    # the cost command's cheapest 8 x H100 offer is the cheapest whole-instance bill
    assert main(["cost", "run", "--gpu", "h100-sxm", "--gpus", "8", "--hours", "10", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["cost"]["cheapest"]["total"]
    bills = [
        o.on_demand_usd_per_gpu_hour * -(-8 // o.gpus_per_instance) * o.gpus_per_instance * 10
        for o in cat.offers
        if o.gpu_id == "h100-sxm"
    ]
    assert got == pytest.approx(min(bills))


@pytest.mark.parametrize(
    "task,batch,acquire",
    [
        ("inference", 8, "either"),
        ("inference", 64, "rent"),
        ("train", 2, "either"),
        ("lora", 4, "own"),
    ],
)
def test_shared_work_gives_the_per_candidate_figures(task, batch, acquire):
    """recommend() computes memory plans, decode rates and priced offers once per call and
    caches the owning cost; every candidate's figures must equal those computed for it alone
    with the public functions (advisor.memory.estimate, advisor.perf.training, advisor.money.cost)."""
    from advisor.money import cost
    from advisor.perf import training

    spec = MODELS.model("llama-3.1-8b").spec
    w = rec.Workload(model=spec, task=task, batch=batch, seq=2048, acquire=acquire)
    gpus = {g.id: g for g in MODELS.gpus}
    checked = 0
    for r in rec.recommend(w, MODELS):
        if not r.ok:
            continue
        g = gpus[r.gpu_id]
        if task == "inference":
            i, o = sfit.split_context(2048)
            f = sfit.best_fit(
                spec, g, gpus=r.count, concurrency=batch, input_tokens=i, output_tokens=o
            )
            assert (f.label, f.total_bytes) == (r.sharding, r.memory_per_gpu_bytes)
            assert r.tokens_per_s == f.point.tokens_per_s
            assert r.tokens_per_s_per_user == f.point.tokens_per_s_per_user
        else:
            plan = next(p for p in rec._plans(w, r.count) if p[0] == r.sharding)
            assert mem._estimate(plan[1]).total_bytes == r.memory_per_gpu_bytes
            st = training.setup_step(plan[1], g)
            assert r.tokens_per_s == st.tokens_per_s
        if r.own_cost is not None:
            # the cards in whole systems (advisor.data.systems), their server and its power
            # (a rack or desktop box priced whole: Purchase.prices)
            bought = systems.purchase_for(g, r.count, MODELS.systems)
            plan = cost.owning_plan(  # the one owning builder, as everywhere
                g,
                r.count,
                electricity_usd_per_kwh=w.electricity_usd_per_kwh,
                horizon_months=w.horizon_months,
                systems=MODELS.systems,
                figures=MODELS.owning,
                pue=w.pue,
            )
            assert plan.own.server_usd == (bought.server_usd or 0.0)
            assert plan.own.host_power_w == bought.host_power_w
            full = cost.tco(plan.own, 0.0, utilisation=1.0, horizon_months=w.horizon_months)
            assert r.own_cost == full.own_total
        if r.rent_cost is not None:
            offer = rec._cheapest_price(MODELS.offers, g.id, "on_demand", r.count)
            gpi = max(1, int(offer.gpus_per_instance))
            billed = -(-r.count // gpi) * gpi
            hours = w.horizon_months * cost.HOURS_PER_MONTH
            assert r.rent_cost == offer.on_demand_usd_per_gpu_hour * billed * hours * 1.0
        checked += 1
    assert checked >= 10


def test_sxm_and_oam_are_owned_only_as_whole_boards():
    """Issue 38: an SXM / OAM accelerator is bought on its 4- or 8-GPU board (advisor.data.systems),
    never as 2 loose cards; renting 2 stays possible."""
    cat = load_catalog()
    spec = cat.model("llama-3.1-8b").spec
    w = rec.Workload(model=spec, task="inference", batch=4, seq=2048, acquire="own")
    rows = {(r.gpu_id, r.count): r for r in rec.recommend(w, cat)}
    two = rows[("mi300x", 2)]
    assert not two.ok and two.reasons[0].key == "recommend.platform"
    assert rows[("mi300x", 8)].ok
    assert rows[("h100-sxm", 4)].ok and not rows[("h100-sxm", 2)].ok
    assert rows[("rtx-4090", 2)].ok  # PCIe: any count a server holds
    rent = rec.Workload(model=spec, task="inference", batch=4, seq=2048, acquire="rent")
    assert next(r for r in rec.recommend(rent, cat) if (r.gpu_id, r.count) == ("h100-sxm", 2)).ok


def test_unsupported_formats_are_rejected_with_the_reason():
    """Issue 38: FP8 only where the card has FP8 tensor cores (not MI250X, not A100); AWQ not
    on AMD or Gaudi (vLLM's supported-hardware table)."""
    cat = load_catalog()
    spec = cat.model("llama-3.1-8b").spec
    w = rec.Workload(model=spec, task="inference", batch=4, seq=2048, weights="fp8", acquire="rent")
    rows = {(r.gpu_id, r.count): r for r in rec.recommend(w, cat)}
    for gid in ("mi250x", "a100-80gb-sxm"):
        r = rows[(gid, 8)]
        assert not r.ok and r.reasons[0].key == "support.no_fp8", r.reasons
    w = rec.Workload(model=spec, task="inference", batch=4, seq=2048, weights="awq", acquire="rent")
    rows = {(r.gpu_id, r.count): r for r in rec.recommend(w, cat)}
    assert rows[("gaudi3", 8)].reasons[0].key == "support.format"
    assert rows[("mi300x", 8)].reasons[0].key == "support.format"


def test_qlora_and_fp8_training_only_where_they_run():
    """Issue 38: QLoRA needs bitsandbytes, which has no backend for TPUs (JAX/XLA) or Trainium
    (Neuron): refused there with the reason; on Gaudi, AMD and Apple it runs with bitsandbytes
    0.50 (a note). FP8 training is refused on every card without FP8 tensor cores, the 2026
    ones included (M3 Ultra, Ryzen AI Max+ 395, TPU v6e)."""
    from advisor.data import support

    cat = load_catalog()
    for gid in ("tpu-v5e", "tpu-v6e", "tpu-7x", "trainium2"):
        why = support.training(cat.gpu(gid), "qlora")
        assert why and why[0].key == "support.no_bnb", gid
        assert not support.training(cat.gpu(gid), "lora"), gid
    for gid in ("gaudi3", "mi300x", "m3-ultra", "h100-sxm", "dgx-spark"):
        assert not support.training(cat.gpu(gid), "qlora"), gid
    for gid in ("gaudi3", "mi300x", "m3-ultra"):
        notes = support.notes_for_training(cat.gpu(gid), "qlora")
        assert any(n.key == "support.bnb_version" for n in notes), gid
    for gid in ("m3-ultra", "m4-max", "ryzen-ai-max-395", "tpu-v6e", "mi250x", "a100-80gb-sxm"):
        why = support.training(cat.gpu(gid), "train", "fp8")
        assert why and why[0].key == "support.no_fp8", gid
    for gid in ("b300", "mi355x", "trainium2", "tpu-7x", "h100-sxm"):
        assert not support.training(cat.gpu(gid), "train", "fp8"), gid
    # in the picker: a TPU is rejected for QLoRA with the reason
    spec = cat.model("llama-3.1-8b").spec
    w = rec.Workload(model=spec, task="qlora", batch=1, seq=2048, acquire="either")
    rows = {(r.gpu_id, r.count): r for r in rec.recommend(w, cat)}
    r = rows[("trainium2", 1)]
    assert not r.ok and any(x.key == "support.no_bnb" for x in r.reasons), r.reasons


def test_serving_any_concurrency_and_replicas_beyond_a_node():
    """Issue 38: 200 requests in flight (not a power of 2) over replicas; past 8 GPUs whole
    nodes; the chosen layout meets the per-user speed."""
    cat = load_catalog()
    spec = cat.model("llama-3.1-70b").spec
    w = rec.Workload(
        model=spec,
        task="inference",
        batch=200,
        seq=4096,
        max_gpus=32,
        target_tokens_per_s_per_user=20.0,
        acquire="rent",
    )
    ok = [r for r in rec.recommend(w, cat) if r.ok]
    assert ok and {r.count for r in ok} - {1, 2, 4, 8}
    for r in ok:
        assert r.tensor_parallel <= 8 and r.replicas * r.tensor_parallel == r.count
        assert r.concurrency_per_replica * r.replicas >= 200
        assert r.tokens_per_s_per_user >= 20.0 and r.per_million_tokens > 0


def test_engines_and_flash_attention_are_checked():
    """Issue 38: TensorRT-LLM only on NVIDIA (the serving calculator refuses it on an AMD card
    with the reason); a CUDA card without FlashAttention 2 is flagged on a training row."""
    from advisor import webapi
    from advisor.data import support

    cat = load_catalog()
    webapi.set_catalog(cat)
    r = webapi.run("serving", {"gpu": "mi300x", "engine": "trtllm"})
    assert r["error"]["key"] == "support.engine" and r["error"]["field"] == "engine"
    assert "error" not in webapi.run("serving", {"gpu": "h100-sxm", "engine": "trtllm"})
    assert not support.flash_attention(cat.gpu("t4")) and support.flash_attention(cat.gpu("a10"))
    spec = cat.model("llama-3.2-1b").spec
    w = rec.Workload(model=spec, task="lora", batch=1, seq=512, acquire="rent")
    rows = {(x.gpu_id, x.count): x for x in rec.recommend(w, cat)}
    t4 = rows[("t4", 1)]
    assert any(n.key == "support.no_flash" for n in t4.notes) or not t4.ok
    assert not any(n.key == "support.no_flash" for n in rows[("h100-sxm", 1)].notes)


def test_a_model_larger_than_a_node_is_split_over_nodes():
    """Issue 38: multi-node where the model needs it: Llama 3.1 405B in BF16 does not fit on
    one 8 x H100 node; on 16 it runs with tensor parallelism over two nodes (across
    InfiniBand, advisor.perf.serving_fit.INTER_NODE), slower per token than inside one node."""
    from advisor.perf import serving_fit as sf

    cat = load_catalog()
    spec = cat.model("llama-3.1-405b").spec
    g = cat.gpu("h100-sxm")
    i, o = sf.split_context(4096)
    one = sf.best_fit(spec, g, gpus=8, concurrency=8, input_tokens=i, output_tokens=o)
    assert not one.fits
    two = sf.best_fit(spec, g, gpus=16, concurrency=8, input_tokens=i, output_tokens=o)
    assert two.fits and two.tensor_parallel == 16 and two.replicas == 1
    inside = sf.best_fit(
        spec, cat.gpu("mi300x"), gpus=8, concurrency=8, input_tokens=i, output_tokens=o
    )
    assert inside.fits and inside.tensor_parallel <= 8


def test_rented_tokens_are_priced_on_the_whole_instances_billed():
    """Issue 38: a cloud rents its instance shapes: the cost per million tokens of 2 GPUs on
    an 8-GPU instance pays for 8."""
    offers = (offer("big80", 2.0, gpi=8),)
    cat = SimpleNamespace(gpus=CATALOG.gpus, offers=offers, currency=None, model=MODELS.model)
    w = rec.Workload(model=LLAMA8, task="inference", batch=4, acquire="rent")
    r = by(rec.recommend(w, cat), "big80", 2)
    assert r.ok and r.per_million_tokens == pytest.approx(2.0 * 8 / (r.tokens_per_s * 3600) * 1e6)


def test_an_assumed_server_price_is_a_note_on_the_row():
    """Issue 38: 8 x MI300X owned go into an 8-OAM server with no published price
    (catalog/systems/oam-8.yaml): the row counts the stated assumption (never 0) and says so
    in a note that names the system and the amount."""
    from advisor.money import cost

    cat = load_catalog()
    w = rec.Workload(
        model=cat.model("llama-3.1-70b").spec, task="inference", batch=200, seq=4096,
        target_tokens_per_s_per_user=15.0, acquire="own", horizon_months=36,
        formats=("fp8", "bf16"),
    )  # fmt: skip
    ok = {(r.gpu_id, r.count): r for r in rec.recommend(w, cat) if r.ok}
    mi = ok[("mi300x", 8)]
    assert mi.system == "oam-8" and mi.server_priced and mi.server_assumed
    note = next(n for n in mi.notes if n.key == "recommend.server_assumed")
    oam8 = next(s for s in cat.systems if s.id == "oam-8")
    assert note.params["cost"] == pytest.approx(oam8.server_usd_assumed)
    assert "ask the vendor" in note.message
    plan = cost.owning_plan(
        cat.gpu("mi300x"), 8, systems=cat.systems, figures=cat.owning, horizon_months=36,
        electricity_usd_per_kwh=w.electricity_usd_per_kwh, pue=w.pue,
    )  # fmt: skip
    assert mi.purchase == pytest.approx(plan.own.purchase_usd)
    h = ok[("h200", 8)]  # an HGX server, a read (secondary) price: no note
    assert h.system == "hgx-8" and not h.server_assumed
    assert not any(n.key == "recommend.server_assumed" for n in h.notes)
