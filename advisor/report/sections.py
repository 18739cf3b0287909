"""The texts of each section of a client report: advisor.report.data's numbers and keys, put
into words and formatted numbers in the report's language. Plain text only: every value is
escaped where templates/report/*.html.j2 place it (Jinja2 autoescape), so nothing here is
markup. One `Sections` per report and language; the templates call its methods.
"""

from __future__ import annotations

import math
import re

from .format import fmt_count, fmt_gib, fmt_money, fmt_num, fmt_pct, tr
from .i18n import STRINGS

NBSP = "\u00a0"


def _what(items: list[str]) -> str:
    """'H100: memory_gib', 'H100: tdp_w', 'H200: tdp_w' -> 'H100: memory_gib, tdp_w; H200: tdp_w'."""
    groups: dict[str, list[str]] = {}
    for item in items:
        subject, sep, fld = item.partition(": ")
        groups.setdefault(subject if sep else "", []).append(fld if sep else subject)
    return "; ".join(f"{k}: {', '.join(v)}" if k else ", ".join(v) for k, v in groups.items())


def _precision_text(precision: str) -> str:
    """'amp-bf16' -> 'AMP BF16', 'bf16' -> 'BF16': the precision's name as a datasheet writes it."""
    return precision.replace("-", " ").upper()


class Sections:
    """Texts of one report (`report`: advisor.report.data.build_report) in its language."""

    def __init__(self, report: dict):
        self.r = report
        self.lang = report["lang"]
        self.cur = report["currency"]

    # -- words and numbers -------------------------------------------------------------------
    def t(self, key, **params) -> str:
        return tr(self.lang, key, **params)

    def n(self, v, d=0) -> str:
        return fmt_num(v, d, self.lang)

    def gib(self, b) -> str:
        return fmt_gib(b, self.lang)

    def money(self, v, d=0) -> str:
        return fmt_money(v, self.cur, self.lang, d)

    def pct(self, v, d=None) -> str:
        if d is None:  # one decimal below 10 %, so that small shares do not read as 0 %
            d = 1 if v is not None and abs(v) < 0.1 else 0
        return fmt_pct(v, self.lang, d)

    def count(self, n) -> str:
        return fmt_count(n, self.lang)

    def sharding(self, r) -> str:
        s = r["sharding"]
        if s in ("single", "ddp", "zero3", "-"):
            return self.t(f"shard.{s}", count=r["count"])
        if s.startswith("replicas"):
            return self.t("shard.replicas", count=r["count"])
        tp, _, reps = s[2:].partition("x")
        if reps:
            return self.t("shard.tpx", tp=tp, replicas=reps)
        return self.t("shard.tp", tp=tp)

    def reason(self, reason: dict) -> str:
        key = f"reason.{reason['key']}"
        if key not in STRINGS[self.lang]:
            return reason["message"]
        p = dict(reason["params"])
        for k in ("cost", "budget"):
            if k in p:
                p[k] = self.money(p[k])
        for k in ("needs_gib", "has_gib", "hours", "deadline_hours", "needs_kw", "has_kw"):
            if k in p:
                p[k] = self.n(p[k], 1)
        per_user = reason["key"] == "recommend.too_slow_per_user"
        for k in ("tokens_per_s", "target"):
            if k in p:
                p[k] = self.n(p[k], 1 if per_user else 0)
        if isinstance(p.get("sizes"), list):
            p["sizes"] = " / ".join(str(x) for x in p["sizes"])
        if isinstance(p.get("precision"), str):
            p["precision"] = p["precision"].upper()
        return self.t(key, **p)

    def item(self, entry: dict) -> str:
        """A risk or a next step: its key with formatted params."""
        fmt = {"share": lambda v: fmt_pct(v, self.lang), "cost": self.money, "tokens_per_s": self.n}
        p = {k: fmt[k](v) if k in fmt else v for k, v in entry["params"].items()}
        return self.t(entry["key"], **p)

    def config(self, r) -> str:
        """'2 × H100 SXM'."""
        return f"{self.n(r['count'])} × {r['gpu_name']}"

    def cost_mode(self, r) -> str:
        return f"{self.money(r['cost'])} ({self.t('mode.' + r['mode'])})"

    # -- sections ----------------------------------------------------------------------------
    def header_meta(self) -> str:
        r = self.r
        meta = [self.t("head.for", org=r["organisation"])]
        if r["prepared_for"]:
            meta.append(self.t("head.attn", who=r["prepared_for"]))
        if r["date"]:
            meta.append(self.t("head.date", date=r["date"]))
        return " · ".join(meta)

    def summary_lead(self) -> list[str]:
        c = self.r["constraints"]
        out = []
        for wd in self.r["workloads"]:
            r = wd["recommendation"]
            if r is None:
                out.append(self.t("summary.lead_none", name=wd["name"]))
                continue
            out.append(
                self.t(
                    "summary.lead",
                    name=wd["name"],
                    count=r["count"],
                    gpu=r["gpu_name"],
                    mode=self.t("mode." + r["mode"]),
                    cost=self.money(r["cost"]),
                    months=c["horizon_months"],
                )
            )
        return out

    def summary_facts(self) -> str:
        c = self.r["constraints"]
        facts = [
            self.t("summary.horizon", months=c["horizon_months"]),
            self.t("summary.acquire." + c["acquire"]),
        ]
        if c["budget"] is not None:
            facts.append(self.t("summary.budget", budget=self.money(c["budget"])))
        if c["power_kw"] is not None:
            facts.append(self.t("summary.power", kw=self.n(c["power_kw"], 1)))
        if c["rack_units"] is not None:
            facts.append(self.t("summary.rack", units=c["rack_units"]))
        return " · ".join(facts)

    def audit_inputs(self, wd) -> list[tuple[str, str]]:
        """(label, value) rows of a workload's inputs."""
        inp = wd["inputs"]
        rows = [
            (
                self.t("in.model"),
                f"{wd['model']['display_name']} ({self.count(wd['params'])} {self.t('in.params')})",
            ),
            (self.t("in.task"), self.t("task." + wd["advisor_task"])),
            (self.t("in.seq"), self.n(inp["seq"])),
        ]
        if wd["advisor_task"] == "inference":
            users = self.n(inp["concurrent_users"])
            if inp["users"]:
                users += f" / {self.n(inp['users'])}"
            rows.append((self.t("in.users"), users))
            if inp["per_user_tokens_per_s"] is not None:
                target = self.t(
                    "in.target_v",
                    per=self.n(inp["per_user_tokens_per_s"], 1),
                    total=self.n(inp["target_tokens_per_s"], 0),
                )
                rows.append((self.t("in.target"), target))
            rows.append((self.t("in.weights"), _precision_text(inp["weights"])))
            hours = inp["hours_per_day"] if inp["hours_per_day"] is not None else 24.0
            rows.append((self.t("in.hours_per_day"), self.n(hours, 1)))
            return rows
        rows.append((self.t("in.batch"), self.n(inp["batch"])))
        rows.append((self.t("in.precision"), _precision_text(inp["precision"])))
        data = self.t(
            "in.data_v",
            tokens=self.count(inp["dataset_tokens"]),
            epochs=inp["epochs"],
            total=self.count(inp["total_tokens"]),
        )
        rows.append((self.t("in.data"), data))
        if inp["deadline_hours"] is not None:
            rows.append((self.t("in.deadline"), self.n(inp["deadline_hours"], 1)))
        if inp["runs_per_year"] is not None:
            rows.append((self.t("in.runs"), self.n(inp["runs_per_year"])))
        return rows

    def memory_rows(self, wd) -> list[tuple[str, list[str]]]:
        """(component key, [GiB on one GPU, GiB per GPU of the configuration]) rows, zero
        components left out."""
        one, cfg = wd["memory_one_gpu"], wd["memory"]
        rows = []
        for k, v in one["components"].items():
            v2 = cfg["components"].get(k, 0) if cfg else None
            if not v and not v2:
                continue
            rows.append((k, [self.gib(v)] + ([self.gib(v2)] if cfg is not None else [])))
        return rows

    def memory_totals(self, wd) -> list[tuple[str, list[str]]]:
        one, cfg = wd["memory_one_gpu"], wd["memory"]
        serving = wd["advisor_task"] == "inference"
        return [
            (label, [self.gib(one[key])] + ([self.gib(cfg[key])] if cfg is not None else []))
            for label, key in (
                ("mem.peak_serving" if serving else "mem.peak", "peak_allocated_bytes"),
                ("mem.headroom" if serving else "mem.overhead", "overhead_bytes"),
                ("mem.total", "total_bytes"),
            )
        ]

    def memory_caption(self, wd) -> str:
        r = wd["recommendation"]
        if r is None:
            return ""
        return self.t(
            "mem.caption",
            gpu=r["gpu_name"],
            has=fmt_gib(r["capacity_bytes"], self.lang),
            share=fmt_pct(wd["memory"]["total_bytes"] / r["capacity_bytes"], self.lang),
        )

    def diagnosis_rows(self, wd) -> list[tuple[str, str]]:
        d, r = wd["diagnosis"], wd["recommendation"]
        rows = [
            (self.t("diag.intensity"), self.n(d["intensity_flop_per_byte"], 1)),
            (self.t("diag.ridge"), self.n(d["ridge_point"], 1)),
            (self.t("diag.t_compute"), self.n(d["compute_time_s"] * 1000, 2)),
            (self.t("diag.t_memory"), self.n(d["memory_time_s"] * 1000, 2)),
            (self.t("diag.t_comm"), self.n(d["comm_time_s"] * 1000, 2)),
            (self.t("diag.tokens_per_s"), self.n(d["tokens_per_s"], 0)),
            (
                self.t("diag.feed"),
                self.t("diag.feed_v", mbps=self.n(d["data_feed_bytes_per_s"] / 1e6, 2)),
            ),
        ]
        if "time_per_token_ms" in d:
            rows.append((self.t("diag.tpot"), self.n(d["time_per_token_ms"], 1)))
            rows.append(
                (self.t("diag.ttft", tokens=d["ttft_prompt_tokens"]), self.n(d["ttft_2k_ms"], 0))
            )
        if "step_time_s" in d:
            rows.append((self.t("diag.step"), self.n(d["step_time_s"], 3)))
            rows.append((self.t("diag.mfu"), self.pct(d["mfu"])))
        if r.get("hours_per_run") is not None:
            rows.append((self.t("diag.hours"), self.n(r["hours_per_run"], 1)))
        return rows

    def diagnosis_serving(self, wd) -> str:
        s, r = wd.get("serving"), wd["recommendation"]
        if not s:
            return ""
        return self.t(
            "diag.serving",
            seqs=s["max_concurrent_sequences"],
            tokens=self.n(s["kv_cache_tokens"], 0),
            users=wd["inputs"]["concurrent_users"],
            tp=r["tensor_parallel"],
        )

    # -- time model: serving curve, cluster plan, measured bands ------------------------------
    def band(self, kind: str) -> str:
        """The measured error band of a kind of time figure, as one sentence ("" if none)."""
        b = self.r["time_model"]["bands"].get(kind)
        if not b:
            return ""
        return self.t(
            "band.line",
            median=self.pct(b["median_abs_error"], 0),
            worst=self.pct(b["worst_abs_error"], 0),
            n=b["n"],
        )

    def curve_intro(self, wd) -> str:
        c = wd["serving_curve"]
        return self.t(
            "rec.curve",
            inp=self.n(c["input_tokens"]),
            out=self.n(c["output_tokens"]),
            tp=c["tensor_parallel"],
            replicas=c["replicas"],
            limit=c["max_concurrency"],
        )

    def curve_rows(self, wd) -> list[tuple]:
        c = wd["serving_curve"]
        mark = (c.get("users_point") or {}).get("concurrency")
        return [
            (
                self.n(p["concurrency"]) + (" ←" if p["concurrency"] == mark else ""),
                self.n(p["ttft_s"] * 1e3, 0),
                self.n(p["tpot_s"] * 1e3, 1),
                self.n(p["tokens_per_s_per_user"], 1),
                self.n(p["tokens_per_s"], 0),
                self.n(p["tokens_per_s_per_gpu"], 0),
                self._per_m(p.get("per_million_tokens")),
                self._per_m(p.get("own_per_million_tokens")),
            )
            for p in c["points"]
        ]

    def _per_m(self, v) -> str:
        return "—" if v is None else self.money(v, 3)

    def cluster_text(self, wd) -> str:
        ch = wd["cluster"]["chosen"]
        return self.t(
            "rec.cluster",
            gpus=self.n(ch["gpus"]),
            nodes=self.n(ch["nodes"]),
            layout=ch["label"],
            days=self.n(ch["days"], 1),
            mfu=self.pct(ch["step"]["mfu"], 0),
            cost=self.money(ch["cost_usd"] * wd["rate"]) if ch["cost_usd"] else "—",
            mwh=self.n(ch["energy_kwh"] / 1000, 1) if ch["energy_kwh"] is not None else "—",
        )

    def check_rows(self, checks) -> list[tuple[str, str, str, str]]:
        """(constraint, limit, achieved, met / MISSED) of advisor.report.data.constraint_checks."""
        fmt = {
            "memory": lambda v: self.gib(v),
            "per_user": lambda v: self.n(v, 1),
            "deadline": lambda v: self.n(v, 1),
            "budget": lambda v: self.money(v),
            "power": lambda v: self.n(v, 1),
        }
        return [
            (
                self.t("chk." + c["key"]),
                fmt[c["key"]](c["target"]),
                "—" if c["achieved"] is None else fmt[c["key"]](c["achieved"]),
                self.t("chk.met" if c["met"] else "chk.missed"),
            )
            for c in checks
        ]

    def nearest_text(self, wd) -> str:
        n = wd["nearest"]["recommendation"]
        return self.t(
            "chk.nearest", config=self.config(n), sharding=self.sharding(n), cost=self.cost_mode(n)
        )

    def format_line(self, r) -> str:
        """A serving plan's formats, layout and per-user speed ("" for training)."""
        if r.get("tokens_per_s_per_user") is None:
            return ""
        return self.t(
            "rec.format",
            weights=str(r["weights"]).upper(),
            kv=str(r.get("kv_dtype") or "bf16").upper(),
            replicas=self.n(r["replicas"]),
            tp=r["tensor_parallel"],
            per=self.n(r["concurrency_per_replica"]),
            user=self.n(r["tokens_per_s_per_user"], 1),
        )

    def per_million_line(self, r) -> str:
        """A serving plan's cost per million generated tokens, owned and rented ("" for
        training, "—" for a mode the plan has no price for)."""
        if r.get("tokens_per_s_per_user") is None:
            return ""
        own, rent = r.get("own_per_million_tokens"), r.get("per_million_tokens")
        if own is None and rent is None:
            return ""
        return self.t(
            "rec.per_million",
            own="—" if own is None else self.money(own, 2),
            rent="—" if rent is None else self.money(rent, 2),
        )

    def speed(self, r) -> str:
        if r.get("hours_per_run") is not None:
            return self.n(r["hours_per_run"], 1) + NBSP + self.t("unit.hours")
        return self.n(r["tokens_per_s"], 0) + NBSP + self.t("unit.tokens_s")

    def memory_fit(self, r) -> str:
        return f"{self.gib(r['memory_per_gpu_bytes'])}{NBSP}/ {self.gib(r['capacity_bytes'])}"

    def cost_verdict(self, wd) -> str:
        c = wd["cost"]
        t, own, rent = c["tco"], c["own"], c["rent"]
        return self.t(
            "cost.verdict." + ("own" if t["savings"] > 0 else "rent"),
            own=f"{own['count']} × {own['gpu_name']}",
            rent=f"{rent['count']} × {rent['gpu_name']}",
            months=c["horizon_months"],
            diff=self.money(abs(t["savings"])),
        )

    def cost_rows(self, wd) -> list[tuple[str, str]]:
        c = wd["cost"]
        t, o, months = c["tco"], c["offer"], c["horizon_months"]
        if t["break_even_utilisation"] is not None:
            be_u = self.pct(t["break_even_utilisation"])
        else:
            be_u = self.t("cost.never")
        if t["break_even_month"] is not None:
            be_m = self.n(t["break_even_month"])
        else:
            be_m = self.t("cost.not_within", months=months)
        rate = self.t(
            "cost.cloud_rate_v",
            price=self.money(o["usd_per_gpu_hour"] * wd["rate"], 2),
            provider=o["provider"],
            instance=o["instance"],
            read=o["read"],
            billed=c["billed_gpus"],
        )
        if t.get("system") is None:
            server = self.t("cost.server_none")
        elif t["server_priced"]:
            server = self.t(
                "cost.server_assumed" if t.get("server_assumed") else "cost.server_v",
                n=t["nodes"],
                system=t["system"],
                cost=self.money(t["server"]),
            )
        else:
            server = self.t("cost.server_unpriced", n=t["nodes"], system=t["system"])
        items = {i["key"]: i for i in t.get("items", ())}
        rows = [
            (self.t("cost.cards"), self.money(t["cards"])),
            (self.t("cost.server"), server),
            (self.t("cost.network"), self._network(items.get("network"))),
            (self.t("cost.purchase_total"), self.money(t["purchase"])),
            (self.t("cost.power_month"), self.money(t["power_per_month"])),
            (self.t("cost.hosting"), self._hosting(items.get("hosting"), t)),
            (self.t("cost.sw_support"), self._sw_support(items.get("software_support"))),
            (self.t("cost.hw_support"), self.t("cost.support_unpriced")),
            (
                self.t(
                    "cost.resale_v",
                    share=self.pct(t["resale_fraction"]),
                    months=months,
                ),
                "−" + self.money(t["resale"]),
            ),
        ]
        hw = items.get("hardware_support")
        if hw and hw.get("usd_per_year") is not None:
            rows[7] = (self.t("cost.hw_support"), self.money(hw["usd_per_year"]))
        return rows + [
            (self.t("cost.own_total", months=months), self.money(t["own_total"])),
            (self.t("cost.cloud_rate"), rate),
            (self.t("cost.cloud_month"), self.money(t["cloud_per_month"])),
            (self.t("cost.cloud_total", months=months), self.money(t["cloud_total"])),
            (self.t("cost.be_util"), be_u),
            (self.t("cost.be_month"), be_m),
        ]

    def _network(self, it) -> str:
        if it is None or not it.get("priced", True) or it.get("usd") is None:
            return self.t("cost.network_unpriced")
        p = it.get("params") or {}
        if not it["usd"]:
            return self.t("cost.network_none")
        return self.t(
            "cost.network_v",
            cost=self.money(it["usd"]),
            ports=p.get("ports"),
            tiers=p.get("tiers"),
            nodes=p.get("nodes"),
        )

    def _hosting(self, it, t) -> str:
        if it is None or not it.get("priced", True) or it.get("usd_per_month") is None:
            return self.t("cost.network_unpriced")
        p = it.get("params") or {}
        if "kw" not in p:
            return self.t("cost.hosting_none")
        # the rate in the report's currency (the item's amount is converted, its params not)
        rate = it["usd_per_month"] / p["kw"] if p["kw"] else 0.0
        return self.t(
            "cost.hosting_v",
            cost=self.money(it["usd_per_month"]),
            kw=self.n(p["kw"], 2),
            rate=self.money(rate, 2),
            ru=self.n(t["rack_units"]) if t.get("rack_units") else "—",
        )

    def _sw_support(self, it) -> str:
        if it is None:
            return self.t("cost.sw_support_none")
        p = it.get("params") or {}
        if p.get("included"):
            return self.t("cost.sw_support_incl", product=p.get("product"))
        key = "cost.sw_support_v" if it.get("counted", True) else "cost.sw_support_off"
        per_gpu = it["usd_per_year"] / p["n"] if p.get("n") else 0.0
        return self.t(
            key,
            cost=self.money(it["usd_per_year"]),
            product=p.get("product"),
            each=self.money(per_gpu),
        )

    def cost_caption(self, t) -> str:
        return self.t(
            "cost.caption",
            pue=self.n(t["pue"], 2),
            kwh=self.n(t["electricity_usd_per_kwh"], 3),
        )

    def chart(self, tco: dict) -> dict:
        """Geometry of the cumulative own-vs-rent chart (SVG user units, 640 x 300): gridlines
        at a 1-2-2.5-5 step, at most 6 of them; month ticks every 6 (12 beyond 36 months)."""
        own, cloud = tco["cumulative_own"], tco["cumulative_cloud"]
        months = len(own) - 1
        W, H, L, B, T, Rm = 640, 300, 78, 40, 16, 16
        top = max(max(own), max(cloud)) or 1.0
        mag = 10 ** math.floor(math.log10(top))
        step = next(
            s * mag for s in (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10) if top / (s * mag) <= 6
        )
        ymax = math.ceil(top / step) * step

        def x(m):
            return L + (W - L - Rm) * m / months

        def y(v):
            return T + (H - T - B) * (1 - v / ymax)

        def pts(series):
            return " ".join(f"{x(m):.1f},{y(v):.1f}" for m, v in enumerate(series))

        grid = []
        k = 0
        while k * step <= ymax + 1e-9:
            grid.append(
                {
                    "y": f"{y(k * step):.1f}",
                    "ty": f"{y(k * step) + 4:.1f}",
                    "label": self.money(k * step),
                }
            )
            k += 1
        tick = 6 if months <= 36 else 12
        out = {
            "W": W,
            "H": H,
            "L": L,
            "B": B,
            "Rm": Rm,
            "grid": grid,
            "ticks": [{"x": f"{x(m):.1f}", "m": m} for m in range(0, months + 1, tick)],
            "mid": f"{(L + W - Rm) / 2:.0f}",
            "own": pts(own),
            "cloud": pts(cloud),
            "be": None,
        }
        be = tco["break_even_month"]
        if be is not None:
            right = x(be) > L + (W - L - Rm) * 0.6
            anchor, dx = ("end", -8) if right else ("start", 8)
            out["be"] = {
                "cx": f"{x(be):.1f}",
                "cy": f"{y(own[be]):.1f}",
                "tx": f"{x(be) + dx:.1f}",
                "ty": f"{y(own[be]) - 10:.1f}",
                "anchor": anchor,
                "month": be,
            }
        return out

    def curve_chart(self, wd) -> dict:
        """Geometry of the interactivity chart (SVG user units, 640 x 300): tokens/s per GPU
        (y) against tokens/s per user (x), one dot per point of the serving curve, the users'
        point ringed; five gridlines on each axis at a 1-2-2.5-5 step."""
        pts = wd["serving_curve"]["points"]
        mark = (wd["serving_curve"].get("users_point") or {}).get("concurrency")
        W, H, L, B, T, Rm = 640, 300, 70, 44, 16, 16

        def nice(top):
            top = top or 1.0
            mag = 10 ** math.floor(math.log10(top))
            step = next(
                s * mag for s in (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10) if top / (s * mag) <= 5
            )
            return step, math.ceil(top / step) * step

        xs, xmax = nice(max(p["tokens_per_s_per_user"] for p in pts))
        ys, ymax = nice(max(p["tokens_per_s_per_gpu"] for p in pts))

        def x(v):
            return L + (W - L - Rm) * v / xmax

        def y(v):
            return T + (H - T - B) * (1 - v / ymax)

        dots = [
            {
                "cx": f"{x(p['tokens_per_s_per_user']):.1f}",
                "cy": f"{y(p['tokens_per_s_per_gpu']):.1f}",
                "ty": f"{y(p['tokens_per_s_per_gpu']) - 7:.1f}",
                "c": self.n(p["concurrency"]),
                "users": p["concurrency"] == mark,
            }
            for p in pts
        ]
        return {
            "W": W,
            "H": H,
            "L": L,
            "B": B,
            "Rm": Rm,
            "T": T,
            "grid": [
                {"y": f"{y(k * ys):.1f}", "ty": f"{y(k * ys) + 4:.1f}", "label": self.n(k * ys)}
                for k in range(round(ymax / ys) + 1)
            ],
            "ticks": [
                {"x": f"{x(k * xs):.1f}", "label": self.n(k * xs)}
                for k in range(round(xmax / xs) + 1)
            ],
            "mid": f"{(L + W - Rm) / 2:.0f}",
            "line": " ".join(f"{d['cx']},{d['cy']}" for d in dots),
            "dots": dots,
        }

    def risks(self) -> list[tuple[str | None, str]]:
        """(workload name or None, text) of every risk."""
        tm = self.r["time_model"]
        items: list[tuple[str | None, str]] = []
        if tm["n"]:
            items.append(
                (
                    None,
                    self.t(
                        "risk.estimate",
                        n=fmt_count(tm["n"], self.lang),
                        median=fmt_pct(tm["median_abs_error"], self.lang),
                        worst=fmt_pct(tm["worst_abs_error"], self.lang),
                    ),
                )
            )
        items.append((None, self.t("risk.prices")))
        if len(self.r["workloads"]) > 1 and self.r["constraints"]["budget"] is not None:
            items.append((None, self.t("risk.budget_each")))
        for wd in self.r["workloads"]:
            items.extend((wd["name"], self.item(x)) for x in wd["risks"])
        return items

    def assumptions(self) -> list[str]:
        tm = self.r["time_model"]
        out = []
        if tm["n"]:
            out.append(
                self.t(
                    "assume.time_model",
                    n=fmt_count(tm["n"], self.lang),
                    median=fmt_pct(tm["median_abs_error"], self.lang),
                    worst=fmt_pct(tm["worst_abs_error"], self.lang),
                )
            )
        return out + [self.t("assume.memory"), self.t("assume.power")]

    def what(self, source: dict) -> str:
        """What a source backs, in the report's language: catalog field names as words
        (`field.*`), the English labels of report_data by their `what.*` key, numbers in the
        language's form ("USD → EUR: 0,86")."""
        return _what([self._what_item(item) for item in source["what"]])

    def _what_item(self, item: str) -> str:
        subject, sep, fld = item.partition(": ")
        if not sep:
            subject, fld = "", item
        base, dot, prec = fld.partition(".")
        table = STRINGS[self.lang]
        key = f"field.{base}.prec" if dot else f"field.{base}"
        if key in table:
            fld = self.t(key, precision=prec.upper())
        elif f"what.{fld}" in table:
            fld = self.t(f"what.{fld}")
        fld = re.sub(
            r"\d+\.\d+",
            lambda m: self.n(float(m.group()), len(m.group()) - m.group().index(".") - 1),
            fld,
        )
        return f"{subject}: {fld}" if subject else fld
