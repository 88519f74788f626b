# Cross-check of the hand-derived CR1 standard errors in the benchmarks'
# uncertainty tests (analysis/*/uncertainty_test.go) with statsmodels:
# OLS on a constant with cov_type="cluster" (default use_correction=True).
# Run: /usr/bin/python3 analysis/uncertainty/testdata/cluster_ref.py
# Output (statsmodels 0.13.5):
#   icbc paired    25.0
#   icbc unpaired  14.433756729740644
#   by cluster     50.0
#   by item        28.867513459481287
import numpy as np
import statsmodels.api as sm


def se(y, groups):
    fit = sm.OLS(np.array(y, float), np.ones(len(y))).fit(cov_type="cluster", cov_kwds={"groups": np.array(groups)})
    return fit.bse[0]


# ICBCBench linearised items (50, 0, 50, 0): EN/ZH versions of tasks 1
# and 2 as two clusters, or four tasks alone
print("icbc paired   ", se([50, 0, 50, 0], [0, 1, 0, 1]))
print("icbc unpaired ", se([50, 0, 50, 0], [0, 1, 2, 3]))
# items (100, 100, 0, 0): two clusters (companies, queries, a forecast's
# company or week) against every item alone
print("by cluster    ", se([100, 100, 0, 0], [0, 0, 1, 1]))
print("by item       ", se([100, 100, 0, 0], [0, 1, 2, 3]))
