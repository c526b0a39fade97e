"""Dtypes and the named structures that cross the boundary between Python and the compiled loop.

This is the one module that knows how records are laid out. Everything else reads
and writes them by field name.

- Binned codes are ``uint8``: ``max_bins <= 255`` value bins plus one code for
  missing values (``missing_code == max_bins``), so a histogram has
  ``max_bins + 1 <= 256`` rows. Exact mode (``max_bins=None`` or up to 65 535) uses
  ``uint16`` codes, ``missing_code`` the most value bins of any feature. Codes are stored feature-major, shape
  ``(n_features, n_samples)``, so the histogram pass of one feature streams one
  contiguous row.
- Labels inside the kernels are ``uint16`` class indices (0 for ``classes_[0]``,
  i.e. y = -1; 1 for ``classes_[1]``, i.e. y = +1; 0 .. K - 1 for K classes): they
  index the histogram's class field directly. Up to ``MAX_CLASSES`` classes.
- A categorical feature's codes are category indices ``0 .. n_categories - 1``
  (at most ``max_bins`` categories); unknown categories share the missing code.
  Its splits send a set of categories left: ``categorical = 1`` and the bitset
  ``cat_left`` in the round or node record, ``bin`` the number of categories in
  the set minus one and ``threshold`` NaN.
- Per-sample weights and all sums are ``float64``: boosting weights span many
  orders of magnitude after a few hundred rounds, and float32 sums would make
  the chosen stump depend on summation order.
- A stump histogram is ``float64[n_features, n_bins, 2]``: per bin, the learner
  weight of class 0 and of class 1, side by side (the hot kernel indexes it as a
  flat array with stride 2). A tree histogram is
  ``float64[n_features, n_bins, n_classes + 1]``: per bin the learner weight of each
  class, then the count of rows with positive weight (kept only with
  ``min_samples_leaf > 1``); least-squares trees add a last field, the sum of p.

The fitted model is two structured arrays, :data:`ROUND_DTYPE` (one record per
round) and :data:`NODE_DTYPE` (the trees' nodes, one row of nodes per round). The
compiled loop writes them; the estimator keeps them as ``rounds_`` and ``nodes_``;
prediction reads them. Nothing is repacked in between.
"""
from collections import namedtuple

import numpy as np

X_BINNED_DTYPE = np.uint8
#: exact mode's codes (max_bins=None or above MAX_BINS)
X_BINNED_EXACT_DTYPE = np.uint16
Y_DTYPE = np.uint16
#: the most classes a class index holds (a fit with more says so instead of wrapping around)
MAX_CLASSES = int(np.iinfo(Y_DTYPE).max) + 1
WEIGHT_DTYPE = np.float64
MAX_BINS = 255
#: the most value bins of exact mode (uint16 codes, one code for missing values)
MAX_BINS_EXACT = 65535
#: 64-bit words of a bitset over the codes 0 .. MAX_BINS (a categorical split's left side)
CAT_WORDS = 4

#: One record per kept round: the fitted ensemble (trees: the root split; the tree is in NODE_DTYPE).
ROUND_DTYPE = np.dtype([
    ("feature", np.int64),        # feature index of the stump (trees: of the root split)
    ("bin", np.int64),            # left side is bin code <= bin
    ("threshold", np.float64),    # left side is x <= threshold (raw value); NaN follows missing_left
    ("missing_left", np.int64),   # 1 if NaN goes left
    ("left", np.int64),           # output on the left side (-1 or +1; 0 for trees)
    ("right", np.int64),          # output on the right side; the polarity (equal to left: constant)
    ("alpha", np.float64),        # step size (QuadBoost: the voter's final weight)
    ("error", np.float64),        # weighted error under the boosting weights (sum 1); NaN for QuadBoost
    ("learner_error", np.float64),  # weighted error under the weights the learner saw
    ("edge", np.float64),         # U_I - U_J under the learner's weights (QuadBoost: g = <h, r>)
    ("cost", np.float64),         # the algorithm's cost after the round
    ("log_cost", np.float64),     # its log (the cost itself underflows to 0 after many rounds)
    ("val_error", np.float64),    # weighted validation error after the round (NaN without one)
    ("categorical", np.int64),    # 1: a split of a categorical feature, left is the codes in cat_left
    ("cat_left", np.uint64, (CAT_WORDS,)),  # bitset of the category codes that go left (categorical only)
    # totally corrective fits (LPBoost): the restricted master LP after the round; NaN / 0 otherwise
    ("lp_value", np.float64),     # primal value rho - sum_i D_i xi_i of the master over the columns so far
    ("lp_beta", np.float64),      # dual value beta (equals lp_value at the optimum: strong duality)
    ("n_active", np.int64),       # columns with positive weight in the master's solution
    ("n_seen", np.int64),         # rows the weak learner was built from (fewer than n with weight trimming)
], align=True)

#: Tree nodes; ``nodes_[t]`` is the tree of round t, node 0 its root. Unused slots have left = -1.
NODE_DTYPE = np.dtype([
    ("feature", np.int64),       # split feature (internal nodes; -1 at leaves)
    ("bin", np.int64),           # left is bin code <= bin
    ("threshold", np.float64),   # left is x <= threshold (raw value)
    ("missing_left", np.int64),  # 1 if NaN goes left
    ("left", np.int64),          # index of the left child in the same tree; -1 at a leaf (and unused slots)
    ("right", np.int64),         # index of the right child
    ("class_", np.int64),        # leaf: index into classes_ of the class it names
    ("value", np.float64),       # leaf output (binary: -1 / +1, the confidence-rated value or the mean residual)
    ("gain", np.float64),        # internal node: decrease of the split criterion
    ("weight", np.float64),      # learner weight of the node's rows
    ("categorical", np.int64),   # 1: a split of a categorical feature, left is the codes in cat_left
    ("cat_left", np.uint64, (CAT_WORDS,)),  # bitset of the category codes that go left (categorical only)
], align=True)

#: What one round's weak hypothesis achieved, handed to the step and stop rules.
SUMS_DTYPE = np.dtype([
    ("ui", np.float64),   # learner weight of the examples the weak hypothesis gets right
    ("uj", np.float64),   # learner weight of the examples it gets wrong
    ("wi", np.float64),   # boosting weight (sum 1) of the correct examples
    ("wj", np.float64),   # boosting weight of the wrong examples
    ("qi", np.float64),   # sum of w**2 / p over the correct examples (EBBoost's search only)
    ("qj", np.float64),   # ... over the wrong examples
    ("eta", np.float64),  # sum_i p_i h_i**2 of the weak hypothesis (1 for +-1 outputs; QuadBoost's eta)
    ("z", np.float64),    # confidence-rated trees: the normaliser sum_i w_i exp(-y_i h_i) of the round
    ("max_step", np.float64),  # the largest step the weak hypothesis may take (inf: any); the loop caps the
                               # rule's alpha at it (a step back on a constrained feature: learners.py)
], align=True)

#: Loop state carried from one call of the loop to the next.
STATE_DTYPE = np.dtype([
    ("log_mean_loss", np.float64),  # log(sum_i p_i exp(-y_i F(x_i))) (multiplicative rules)
    ("n", np.float64),              # number of examples with positive sample weight
    ("penalty", np.float64),        # QuadBoost: the penalty of the current weights
    ("best_val", np.float64),       # best validation error so far (inf before the first round)
    ("best_t", np.int64),           # number of rounds at the best validation error
    ("since_best", np.int64),       # rounds since then
    ("stop", np.int64),             # why the last call of the loop returned: RAN_ALL, STOPPED_BY_RULE, ...
    ("untrimmed", np.int64),        # 1: the learner reads every row this round (weight trimming's retry)
    ("n_kept", np.int64),           # weight trimming: how many rows ws.stump.kept (stumps) / ws.tree.rows (trees)
                                    # holds, 0: none, -1: every row until the rows are chosen again
                                    # (learners.trimmed_rows)
    ("hist_ready", np.int64),       # 1: ws.stump.hist (trees: ws.tree.root_hist) holds this round's histograms already
    ("small_left", np.int64),       # 1: ws.stump.side_hist holds the histograms of the stump's left side (else
                                    # right) (incremental.py)
], align=True)

#: Everything a fit's options say, by name: the learner's, the algorithm's and early stopping's.
CONFIG_DTYPE = np.dtype([
    # the weak learner
    ("max_depth", np.int64),         # 0: the binary stump learner; >= 1: the tree learner of this depth
    ("criterion", np.int64),         # CRITERION_*
    ("feature_rank", np.int64),      # use the k-th best feature (1: the best; "lazy" stumps for k >= 2)
    ("min_samples_leaf", np.int64),  # rows with positive weight each leaf needs (trees)
    ("min_weight_fraction_leaf", np.float64),  # fraction of the round's learner weight each leaf needs
    ("n_classes", np.int64),         # classes the learner sees (2, or K for SAMME)
    ("leaf", np.int64),              # LEAF_*
    ("leaf_scale", np.float64),      # kappa of confidence-rated leaves (1/2 AdaBoost, 1/4 VadaBoost)
    ("leaf_smoothing", np.float64),  # delta of confidence-rated leaves, relative to the total learner weight
    ("missing_code", np.int64),      # the bin code of missing values
    ("hist_groups", np.int64),       # feature groups of the histogram passes (speed only, never the result)
    ("trim_rate", np.float64),       # weight trimming: the learner reads the rows holding this share of u (0: all)
    ("hist_rebuild", np.int64),      # build the stump (tree root) histograms from every row every this many rounds,
                                     # in between from the last round's (_kernels/incremental.py); 0: every round
    ("monotone", np.bool_),          # some feature has a monotone constraint (ws.limits.monotone.direction): every step
                                     # alpha, also a re-weighting pass's, stays >= 0
    ("monotone_capped", np.bool_),   # binary stumps may step back on a constrained feature, capped by the credit
                                     # the stumps before put there (ws.limits.monotone.credit; learners.py)
    # the algorithm
    ("lam", np.float64),             # VadaBoost's / EBBoost's variance penalty; QuadBoost's L1/L2 strength
    ("gamma", np.float64),           # SABoost's schedule scale
    ("schedule", np.int64),          # SABoost's SCHEDULE_*
    ("penalty", np.int64),           # QuadBoost's PENALTY_*
    ("alpha_max", np.float64),       # QuadBoost's L-infinity box
    ("additive", np.bool_),          # w holds residuals r <- r - alpha h (QuadBoost), not w exp(-alpha y h) / Z
    ("use_q", np.bool_),             # build the w**2 / p histogram too (EBBoost's exact search)
    ("u_is_w", np.bool_),            # the transform is u = w: the learner reads w and the transform is skipped
    ("need_s2", np.bool_),           # the cost reads sum_i w_i**2 / p_i from the weight update
    ("logistic", np.bool_),          # AdaBoost.MH on the logistic loss: the pair weights are p_i sigma(-y_ik F_ik)
                                     # of the pair margins ws.rows.margin (normalised), not carried products
    # validation
    ("patience", np.int64),          # stop after this many rounds without a new best validation error (0: never)
    ("learning_rate", np.float64),   # every step alpha is multiplied by it (1: the algorithm as published)
    # column generation (LPBoost), written between rounds by the master LP
    ("lp_beta", np.float64),         # the restricted master's dual value beta (-inf before the first column)
    ("lp_tol", np.float64),          # stop when the best new column's edge is <= lp_beta + lp_tol
    # seeded feature and row sampling (_kernels/sampling.py); Workspace.limits.sample holds the interaction groups
    ("sample_features", np.bool_),   # draw the features of each round / node (colsample_*, interaction groups)
    ("sample_rows", np.bool_),       # draw the rows of each round (subsample < 1 or bootstrap)
    ("colsample_bytree", np.float64),  # fraction of the features a round reads (0 or 1: all)
    ("colsample_bynode", np.float64),  # fraction of the round's features a node may split on (0 or 1: all)
    ("subsample", np.float64),       # fraction of the rows a round reads (bootstrap: draws per row; 0: 1)
    ("bootstrap", np.bool_),         # draw the rows with replacement by the learner's weights
    ("sample_seed", np.int64),       # the seed of every draw
], align=True)

CRITERION_ERROR = 0  # weighted misclassification error: what the papers' learners minimise
CRITERION_GINI = 1  # weighted Gini impurity, as scikit-learn's trees
CRITERIA = {"error": CRITERION_ERROR, "gini": CRITERION_GINI}
CRITERION_EB = 2  # EBBoost's V*; needs the per-class sums of w**2 / p (a second histogram)
CRITERION_Z = 3  # confidence-rated trees: sum over sides of 2 sqrt(W+ W-)
CRITERION_LS = 4  # least-squares trees on QuadBoost's residuals: -(sum p r)**2 / sum p per side
CRITERION_MH = 5  # AdaBoost.MH (K-vector leaves on per-class weights): sum over classes of 2 sqrt(W+_k W-_k) per
                  # side; its tree histograms have 2K + 1 fields (W+ by class, the row count, W- by class)

LEAF_DISCRETE = 0  # each leaf outputs a class (binary: -1 / +1); the rule's step alpha
LEAF_REAL = 1  # confidence-rated leaves kappa * log((U+ + delta) / (U- + delta)), alpha = 1
LEAF_LSQ = 2  # least-squares leaves: the p-weighted mean residual (QuadBoost)
LEAF_VECTOR = 3  # K classes, one tree: each leaf holds K real values (SAMME.R; AdaBoost.MH with CRITERION_MH),
                 # alpha = 1; ``Model.values``
LEAF_KINDS = {"discrete": LEAF_DISCRETE, "real": LEAF_REAL}

# Stop-rule answers.
CONTINUE = 0  # keep the round and go on
REJECT = 1  # discard the round and stop (e.g. alpha <= 0)
ACCEPT_STOP = 2  # keep the round and stop (e.g. a perfect weak hypothesis)

# Why the loop returned (``state.stop``).
RAN_ALL = 0  # the requested rounds ran
STOPPED_BY_RULE = 1  # the stop rule ended boosting
STOPPED_EARLY = 2  # no new best validation error for ``patience`` rounds
STOPPED_BY_CALLBACK = 3  # a fit callback returned True (set by the driver, never by the loop)

#: The binned training set, as the kernels read it.
TrainData = namedtuple("TrainData", [
    "codes",         # uint8[n_features, n_samples]  binned X, feature-major
    "y",             # uint16[n_samples]  class index
    "p",             # float64[n_samples]  initial distribution (sample weights, sum 1)
    "n_value_bins",  # int64[n_features]  non-missing bins per feature
    "thresholds",    # float64[n_features, 256]  raw threshold of "code <= k" (inf past the last edge)
    "categorical",   # uint8[n_features]  1 for a categorical feature (its codes are category indices)
])

#: The binned validation set and its margins (n_val may be 0: no validation).
ValidData = namedtuple("ValidData", [
    "codes",   # uint8[n_features, n_val]
    "y",       # uint16[n_val]  class index
    "p",       # float64[n_val]  validation weights (sum 1)
    "margin",  # float64[n_val * (1 or K)]  IN/OUT  validation margins, updated round by round
])

#: ``Model.values`` of the fits whose leaves hold one value each (every fit but LEAF_VECTOR's)
NO_VALUES = np.zeros((0, 1, 1), np.float64)

#: The fitted model as the loop writes it (and the estimator keeps it).
Model = namedtuple("Model", [
    "rounds",  # ROUND_DTYPE[capacity]
    "nodes",   # NODE_DTYPE[capacity, max_nodes] (trees), NODE_DTYPE[0, 1] (stumps)
    "values",  # float64[capacity, max_nodes, K]: K-vector leaves (LEAF_VECTOR), the leaf's value of each class;
               # NO_VALUES otherwise
], defaults=[NO_VALUES])

#: The per-row state every learner reads and writes (part of the Workspace).
RowState = namedtuple("RowState", [
    "w",           # float64[n]  IN/OUT  boosting weights (sum 1), or residuals r = y - F (additive rules)
    "u",           # float64[n]  the learner's weights (the rule's transform of w; not written when u = w)
    "q",           # float64[n or 0]  the per-row quantity the learner sums beside u: EBBoost's w**2 / p, least-squares
                   # trees' p (length 0 for the other fits)
    "ylab",        # uint16[n]  the learner's labels (y unless the rule sets them: QuadBoost's sign(r))
    "yh",          # int8[n or 0]  y_i * h_i of the round's weak hypothesis (+1 right, -1 wrong); length 0 for trees
                   # with carried histograms (they mark the wrong rows in TreeScratch.wrong instead)
    "block_sums",  # float64[n_blocks(n), 4]  per-block partial sums of the row passes (scratch of one pass)
    "margin",      # float64[n * K or 0]  AdaBoost.MH on the logistic loss: each (row, class) pair's margin
                   # y_ik F_k(x_i) (length 0 for the other fits)
], defaults=[np.zeros(0, np.float64)])

#: The stump learner's scratch (part of the Workspace; arrays of length 0 or 1 in a tree fit).
StumpScratch = namedtuple("StumpScratch", [
    "hist",           # float64[n_features, n_bins, 2]  the round's histograms (with carried histograms (incremental.py)
                      # the next round's after the update)
    "histq",          # float64[n_features, n_bins or 1, 2]  EBBoost's histograms of w**2 / p
    "fvalue",         # float64[n_features]  each feature's best split: its criterion,
    "fbin",           # int64[n_features]    its bin,
    "fmissing_left",  # int64[n_features]    and where missing values go
    "kept",           # int64[n or 0]  weight trimming: the kept rows (state.n_kept of them, increasing)
    "side_rows",      # int64[n or 0]  carried histograms: the rows of the stump's smaller side (increasing)
    "side_hist",      # float64[n_features, n_bins, 2] or [1, 1, 2]  carried histograms: those rows' histograms
])

#: The tree learner's scratch (part of the Workspace; arrays of length 0 or 1 in a stump fit).
TreeScratch = namedtuple("TreeScratch", [
    "rows",         # int64[n or 0]  the rows of the nodes, node by node (ranges in node_range): the root's are every
                    # row (or, with weight trimming, the kept rows), each level's split nodes' partitioned in place
    "tmp",          # int64[n or 0]  row-index scratch of one pass (the partition; the carried update's rows)
    "level_a",      # float64[slots, n_features, n_bins, fields]  one level's node histograms (fields: n_classes + 1,
                    # and one more for least squares)
    "level_b",      # float64[slots, n_features, n_bins, fields]  the next level's (the two swap level by level)
    "node_range",   # int64[max_nodes, 2]  each node's range of rows
    "leaf_of_row",  # int64[n or 0]  each row's leaf
    "leaf_u",       # float64[max_nodes, n_classes + 1]  per leaf, sums of u per class, then of q
    "leaf_w",       # float64[max_nodes, n_classes]  per leaf and class, sums of w
    "factor",       # float64[max_nodes, 2]  what the update multiplies a leaf's output by: binary trees, per leaf
                    # and class, the weight's multiplier; least squares, column 0, the leaf's value
    "root_hist",    # float64[n_features, n_bins, fields] or [1, 1, 1]  carried histograms (incremental.py): the
                    # root's histograms of the next round, kept from round to round
    "side_hist",    # float64[n_features, n_bins, fields] or [1, 1, 1]  carried histograms: the histograms of the
                    # smaller of the rows the tree gets wrong and those it gets right, after the update
    "wrong",        # int8[n or 0]  carried histograms: 1 where the round's tree is wrong, else 0
])

#: The learner's feature and row draws (part of the Workspace; _kernels/sampling.py).
SampleScratch = namedtuple("SampleScratch", [
    "grouped",      # uint8[n_features]  1 for the features some interaction group holds (all without groups)
    "groups",       # uint8[n_groups, n_features]  the interaction groups (n_groups 0: none)
    "fmask",        # uint8[n_features]  1 for the features the round reads
    "feats",        # int64[n_features]  their indices, increasing: feats[:drawn[1]]
    "drawn",        # int64[3]  the round of the draws, the number of its features, and 1 when the round reads
                    # every feature (a rejected round learnt again: no draw of the round's or its nodes' features)
    "node_groups",  # uint8[max_nodes, n_groups]  the groups alive at each node of the round's tree
    "allowed",      # uint8[slots, n_features]  scratch: the features each node of a level may split on
    "hu",           # float64[n or 0]  bootstrap: the learner's weight of each drawn row (count * sum(u) / draws)
])

#: The rows a tree's passes read: binned codes, the learner's labels and weights, q and the boosting weights.
TreeRows = namedtuple("TreeRows", [
    "codes",  # uint8 / uint16 [n_features, n]
    "y",      # uint16[n]  the learner's labels (class index)
    "u",      # float64[n]  the learner's weights (the splits)
    "q",      # float64[n or 0]  least-squares trees: the sample distribution p (summed into the last field)
    "w",      # float64[n]  boosting weights (the leaves' sums of w)
])

#: Monotone constraints as the learners read them (part of the Workspace; see docs/monotone.md).
Monotone = namedtuple("Monotone", [
    "direction",  # int8[n_features or 0]  -1 / 0 / +1 per feature: the weak hypothesis must not decrease (+1) /
                  # increase (-1) in that feature; length 0 without any constraint
    "bounds",     # float64[max_nodes, 2]  trees: each node's interval [low, high] its leaves' values are kept in
                  # (discrete leaves: their class index), [0, 2] for stumps
    "credit",     # float64[n_features, n_bins] or [0, 0]  stumps with capped steps back (config.monotone_capped):
                  # per constrained feature and bin k, a lower bound of the steps the stumps so far put at the
                  # threshold "code <= k" in the allowed direction (the sum of direction * alpha (right - left) / 2),
                  # kept from round to round; the most a step back there may take
])

#: What the weak learner may choose: its monotone constraints and its drawn features and rows.
Limits = namedtuple("Limits", [
    "monotone",  # Monotone  the features' monotone constraints and the tree nodes' bounds
    "sample",    # SampleScratch  the features and rows the learner may read, the interaction groups
])

#: Scratch space and the state of a fit, allocated once by ``_driver.make_workspace``: a part per meaning.
Workspace = namedtuple("Workspace", [
    "rows",         # RowState  the per-row state
    "sums",         # SUMS_DTYPE[1]  the round's sums
    "state",        # STATE_DTYPE[1]  IN/OUT  carried across calls
    "stump",        # StumpScratch
    "tree",         # TreeScratch
    "vblock_sums",  # float64[n_blocks(n_val), 4]  validation passes' partial sums
    "limits",       # Limits  what the learner may choose (monotone constraints, drawn features and rows)
])

#: The split scans of a tree fit (``tree.choose_level`` passes them on to ``split.level_splits``): numba compiles
#: only the scans a None leaves it.
SplitScan = namedtuple("SplitScan", [
    "kclass",    # None for two classes (only the binary scan), True for more
    "criteria",  # None when only the error criterion's scan runs (two classes, no monotone constraint,
                 # min_samples_leaf 1), True for any criterion
])

#: Each node's best split per feature on a tree level (``tree.choose_level``'s scratch, written by
#: ``split.level_splits``).
FeatureSplits = namedtuple("FeatureSplits", [
    "value",         # float64[slots, n_features]  the split's criterion; inf where none is valid or the node may
                     # not split on the feature
    "bin",           # int64[slots, n_features]
    "missing_left",  # int64[slots, n_features]
])

#: One split of a tree level (``tree.choose_level`` writes them, the level's row passes read them).
SPLIT_DTYPE = np.dtype([
    ("slot", np.int64),          # the split node's slot in the level's histograms
    ("node", np.int64),          # its index in the tree
    ("feature", np.int64),       # split feature
    ("bin", np.int64),           # left is bin code <= bin (categorical: the size of the left set minus one)
    ("missing_left", np.int64),  # 1 if the missing code goes left
    ("categorical", np.int64),   # 1: a split of a categorical feature, left is the codes in cat_left
    ("cat_left", np.uint64, (CAT_WORDS,)),  # bitset of the category codes that go left (categorical only)
], align=True)
