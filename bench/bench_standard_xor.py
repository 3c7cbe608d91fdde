"""Target 8: the standard preset of the six sparse-XOR claims (SPEC Part D), wall time and
where it goes; budget about 30 minutes on 2 cores with the process executor. Opt-in
(``bench/run.py --only standard_xor``, ``make bench-standard``): it takes that long.
"""

from __future__ import annotations

from bench_reproduce import reproduction

XOR_CLAIMS = (
    "one-step,polylog-width,attention-maps,head-specialization,finite-samples,separation-xor"
)


def run() -> list[dict]:
    return reproduction("8 standard, XOR claims: wall time", "standard", XOR_CLAIMS)


if __name__ == "__main__":
    for r in run():
        print(r)
