"""The kind of a source: `vendor` (the maker's, the cloud provider's or the model publisher's
own document, a datasheet), `official` (a statistics office, a standards body, a central
bank), `paper` / `measurement` (peer-reviewed or preprint research, a benchmark body's
results), `secondary` (analysts, press, blogs, third-party sites and repositories), or
`assumption` (declared only: no figure was published, the catalog states how it assumed one,
e.g. catalog/systems `server_usd_assumed`). A report lists secondary sources and assumptions as
such (issue 38: prefer datasheets, vendor documents and
measurements). A source may declare its kind (catalog/systems `kind:`); otherwise the host
(and for GitHub the organisation) decides, by the tables below.
"""

from __future__ import annotations

from urllib.parse import urlparse

PRIMARY = ("vendor", "datasheet", "official", "paper", "measurement")
KINDS = (*PRIMARY, "secondary", "assumption")

VENDOR_HOSTS = (
    "nvidia.com",
    "amd.com",
    "intel.com",
    "habana.ai",
    "supermicro.com",
    "huggingface.co",  # the model publisher's own config.json
    "aws.amazon.com",
    "azure.microsoft.com",
    "cloud.google.com",
    "oracle.com",
    "coreweave.com",
    "lambda.ai",
    "lambdalabs.com",
    "nebius.com",
    "runpod.io",
    "vllm.ai",
    "pytorch.org",
)
OFFICIAL_HOSTS = ("eia.gov", "jedec.org", "uptimeinstitute.com", "cbar.az", "ecb.europa.eu")
PAPER_HOSTS = ("arxiv.org", "doi.org", "acm.org", "usenix.org", "mlcommons.org")
# GitHub / raw.githubusercontent.com organisations that publish their own products
VENDOR_ORGS = (
    "nvidia",
    "rocm",
    "amd",
    "intel",
    "habanaai",
    "vllm-project",
    "pytorch",
    "huggingface",
    "azure",
    "mlcommons",
    "bitsandbytes-foundation",
    "sgl-project",
)


def _host_in(host: str, hosts) -> bool:
    return any(host == h or host.endswith("." + h) for h in hosts)


def source_kind(url: str, declared: str | None = None) -> str:
    """The kind of the source at `url` (module docstring)."""
    if declared in KINDS:
        return declared
    try:
        parsed = urlparse(str(url))
    except ValueError:
        return "secondary"
    host = (parsed.hostname or "").lower()
    if host in ("github.com", "raw.githubusercontent.com"):
        org = parsed.path.strip("/").split("/", 1)[0].lower()
        if org == "mlcommons":
            return "measurement"
        return "vendor" if org in VENDOR_ORGS else "secondary"
    if host == "huggingface.co" and not parsed.path.startswith("/meta-llama/"):
        # a model publisher's own repository is the vendor's; datasets and spaces are not
        first = parsed.path.strip("/").split("/", 1)[0].lower()
        if first in ("datasets", "spaces", "blog", "posts"):
            return "secondary"
    if _host_in(host, VENDOR_HOSTS):
        return "vendor"
    if _host_in(host, OFFICIAL_HOSTS):
        return "official"
    if _host_in(host, PAPER_HOSTS):
        return "paper"
    return "secondary"


def is_secondary(kind: str) -> bool:
    return kind not in PRIMARY
