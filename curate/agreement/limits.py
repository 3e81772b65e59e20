"""How little is too little to say anything: the floors below which a statistic is undefined.
Kept free of heavy imports, since ``mmrb agreement --help`` states them."""

# Pairs with two or more labels of a field below which its bootstrap intervals are undefined.
# The same floor as a Cohen kappa's shared pairs (report.DEFAULT_MIN_SHARED): with fewer, the
# resamples repeat a handful of pairs and the percentile interval is far too narrow (it never
# covers what those pairs did not show).
MIN_BOOTSTRAP_PAIRS = 10
