"""How little is too little to say anything: the floors below which a statistic is undefined.
Kept free of heavy imports, since ``mmrb agreement --help`` states them (and scoring, the
leaderboard and the quality figures take their interval floor from here)."""

# Pairs with two or more labels of a field below which its bootstrap intervals are undefined.
# The same floor as a Cohen kappa's shared pairs (report.DEFAULT_MIN_SHARED): with fewer, the
# resamples repeat a handful of pairs and the percentile interval is far too narrow (it never
# covers what those pairs did not show).
MIN_BOOTSTRAP_PAIRS = 10

# MIN_BOOTSTRAP_PAIRS is also the floor of every bootstrap accuracy interval, with these words
# as the reason: a judge's accuracy in `mmrb score`, the leaderboard and the Leaderboard page
# (the bootstrap resamples scored pairs). An annotator's accuracy on gold and agreement with the
# others' majority (`mmrb quality`, the Quality page) have Wilson intervals, which are computed,
# not resampled: wide on few labels, never collapsed, so they are defined from one label on and
# a gold alert rests on them whatever n (issue 28).
TOO_FEW_PAIRS = "too few pairs"

# Pairs with two or more labels of a field below which the agreement statistics themselves
# (Krippendorff's alpha, percent agreement, Gwet's AC1, Fleiss' and Cohen's kappa) are
# undefined, with the count and this minimum as the reason. With a single pairable pair every
# chance correction is computed from that pair's own labels: Krippendorff's expected
# disagreement D_e is then exactly the observed D_o, so alpha is 0 whatever the labels say;
# AC1's and Fleiss' chance agreement are that pair's own proportions (three labels split 2:1
# give Fleiss -0.5); Cohen's kappa on one shared pair is 0 or undefined; and percent agreement
# is one pair's share, an anecdote rather than a rate. From two pairs on, expected disagreement
# pools labels of different pairs and no statistic is fixed by construction, so the floor is 2:
# how far to trust a value from a few pairs is said by its interval, which stays undefined
# below MIN_BOOTSTRAP_PAIRS. (A higher floor would hide values that are defined and honest about
# their uncertainty.)
MIN_PAIRABLE_PAIRS = 2
