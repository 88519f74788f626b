#!/usr/bin/python3
"""Reference values for analysis/stats clustered statistics, from statsmodels.

Run with the Debian python3 that has python3-statsmodels and scipy:

    /usr/bin/python3 analysis/stats/testdata/stats_ref.py > analysis/stats/testdata/stats_ref.json

Made with statsmodels 0.13.5, scipy 1.10.1, numpy 1.24.2. The data are small
hand-written synthetic examples with unequal cluster sizes.
"""
import json

import numpy as np
import scipy.stats
import statsmodels.api as sm
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

CASES = {
    # 7 clusters of sizes 1..5, values in [0, 1]
    "unbalanced": (
        [0.9, 0.8, 0.85, 0.2, 0.3, 0.25, 0.35, 0.6, 0.55, 0.7, 0.1, 0.15, 0.5, 0.45, 0.95, 1.0, 0.9, 0.8, 0.4],
        [1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 5, 6, 7, 7, 7, 7, 7],
    ),
    # scores on a 0-100 scale, clusters labelled out of order
    "scale100": (
        [62.5, 71.0, 58.25, 90.0, 88.5, 40.0, 45.5, 47.0, 51.0, 77.0, 79.5],
        [30, 30, 30, 10, 10, 20, 20, 20, 20, 40, 40],
    ),
    # binary outcomes, equal cluster sizes
    "binary": (
        [1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0],
        [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4],
    ),
}


def cluster_case(y, g):
    y = np.asarray(y, dtype=float)
    X = np.ones((len(y), 1))
    cl = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": np.asarray(g)})
    naive = sm.OLS(y, X).fit()
    # use_t=True: Student's t with G-1 degrees of freedom (statsmodels'
    # default interval for cov_type="cluster" uses the normal quantile)
    cl_t = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": np.asarray(g)}, use_t=True)
    return {
        "y": list(y),
        "cluster": list(g),
        "mean": float(cl.params[0]),
        "se_cluster": float(cl.bse[0]),
        "se_naive": float(naive.bse[0]),
        "ci95_cluster_normal": [float(v) for v in cl.conf_int(alpha=0.05)[0]],
        "ci95_cluster_t": [float(v) for v in cl_t.conf_int(alpha=0.05)[0]],
        "df": int(cl_t.df_resid_inference),
    }


out = {"cluster": {k: cluster_case(*v) for k, v in CASES.items()}}

out["t_quantiles"] = [
    {"p": p, "df": df, "q": float(scipy.stats.t.ppf(p, df))}
    for p, df in [(0.975, 1), (0.975, 3), (0.975, 10), (0.975, 63), (0.8, 6), (0.995, 2.5), (0.6, 100), (0.025, 5)]
]
out["t_cdf"] = [
    {"t": t, "df": df, "cdf": float(scipy.stats.t.cdf(t, df))}
    for t, df in [(0.5, 1), (-1.7, 4), (2.0, 30), (10.0, 2), (-0.1, 7.5)]
]
out["normal_quantiles"] = [
    {"p": p, "q": float(scipy.stats.norm.ppf(p))} for p in [0.975, 0.8, 0.995, 0.5, 0.001]
]

out["wilson"] = []
for x, n in [(81, 263), (15, 148), (0, 20), (1, 29), (29, 29), (7, 10)]:
    lo, hi = proportion_confint(x, n, alpha=0.05, method="wilson")
    out["wilson"].append({"x": x, "n": n, "lo": float(lo), "hi": float(hi)})

p = [0.01, 0.04, 0.03, 0.005, 0.5, 0.04]
out["holm"] = {"p": p, "adjusted": [float(v) for v in multipletests(p, method="holm")[1]]}

print(json.dumps(out, indent=1, sort_keys=True))
