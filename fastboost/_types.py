"""Dtypes and record layouts, in one place.

- Binned codes are ``uint8``: ``max_bins <= 255`` value bins plus one code for
  missing values (``missing_code == max_bins``), so a histogram has
  ``max_bins + 1 <= 256`` rows. Codes are stored feature-major, shape
  ``(n_features, n_samples)``, so the histogram pass of one feature streams one
  contiguous row.
- Labels inside the kernels are ``uint8`` class indices (0 for ``classes_[0]``,
  i.e. y = -1; 1 for ``classes_[1]``, i.e. y = +1): they index the histogram's
  class field directly.
- Per-sample weights and all sums are ``float64``: boosting weights span many
  orders of magnitude after a few hundred rounds, and float32 sums would make
  the chosen stump depend on summation order.
- A histogram is ``float64[n_features, n_bins, N_HIST_FIELDS]``: per bin, the
  learner weight of class 0 and of class 1, side by side.
"""
import numpy as np

X_BINNED_DTYPE = np.uint8
Y_DTYPE = np.uint8
WEIGHT_DTYPE = np.float64
MAX_BINS = 255

N_HIST_FIELDS = 2  # learner weight of class 0 (y=-1), learner weight of class 1 (y=+1)

CRITERION_ERROR = 0  # weighted misclassification error: what the papers' learners minimise
CRITERION_GINI = 1  # weighted Gini impurity, as scikit-learn's trees
CRITERIA = {"error": CRITERION_ERROR, "gini": CRITERION_GINI}
CRITERION_EB = 2  # EBBoost's V* (spec §3); needs the per-class sums of w**2 / p (a second histogram)
CRITERION_Z = 3  # confidence-rated trees: sum over sides of 2 sqrt(W+ W-) (spec §1 (7), §2 (7))
CRITERION_LS = 4  # least-squares trees on QuadBoost's residuals: -(sum p r)**2 / sum p per side

# Tree learner (``_kernels/tree.py``). A tree histogram is float64[n_features, n_bins, n_classes + 1]:
# per bin the learner weight of each class, then the count of rows with positive weight (kept only with
# min_samples_leaf > 1); least-squares
# trees add a last field, the sum of p (n_classes + 2 fields).
LEAF_DISCRETE = 0  # each leaf outputs a class (binary: -1 / +1); the rule's step alpha
LEAF_REAL = 1  # confidence-rated leaves kappa * log((U+ + delta) / (U- + delta)), alpha = 1
LEAF_LSQ = 2  # least-squares leaves: the p-weighted mean residual (QuadBoost, spec §6 (7))
LEAF_KINDS = {"discrete": LEAF_DISCRETE, "real": LEAF_REAL}
# Tree node record, per round: int64[max_nodes, N_NODE_I] and float64[max_nodes, N_NODE_F]; node 0 is the root.
N_FEATURE = 0  # split feature (internal nodes)
N_BIN = 1  # left is code <= N_BIN
N_MISSING_LEFT = 2  # 1 if missing values go left
N_LEFT = 3  # index of the left child; -1 for a leaf
N_RIGHT = 4  # index of the right child; -1 for a leaf
N_CLASS = 5  # leaf: the class it names (discrete leaves)
N_NODE_I = 6
N_THRESHOLD = 0  # raw threshold: left is x <= N_THRESHOLD
N_VALUE = 1  # leaf output: -1 / +1 (binary discrete) or the confidence-rated value
N_GAIN = 2  # internal node: decrease of the split criterion (feature importances)
N_WEIGHT = 3  # learner weight of the node's rows
N_NODE_F = 4

# Round statistics handed to an algorithm's step and stop rules (float64[N_SUMS]).
SUM_UI = 0  # learner weight of the examples the weak hypothesis gets right
SUM_UJ = 1  # learner weight of the examples it gets wrong
SUM_WI = 2  # boosting weight (sum 1) of the correct examples
SUM_WJ = 3  # boosting weight of the wrong examples
SUM_QI = 4  # sum of w**2 / p over the correct examples (filled only for rules that ask for it)
SUM_QJ = 5  # ... over the wrong examples
SUM_ETA = 6  # sum_i p_i h_i**2 of the weak hypothesis (1 for +-1 outputs; QuadBoost's eta)
N_SUMS = 8

# Per-round integer record: int64[n_rounds, N_IREC]
R_FEATURE = 0  # feature index of the stump
R_BIN = 1  # left side is code <= R_BIN (non-missing)
R_MISSING_LEFT = 2  # 1 if missing values go left
R_LEFT = 3  # output (-1 or +1) on the left side
R_RIGHT = 4  # output on the right side
N_IREC = 5

# Per-round float record: float64[n_rounds, N_FREC]
R_THRESHOLD = 0  # raw threshold: left is x <= R_THRESHOLD (NaN follows R_MISSING_LEFT)
R_ALPHA = 1  # step size of the round
R_ERROR = 2  # error under the boosting weights w (sum 1)
R_LEARNER_ERROR = 3  # error under the learner's weights u, normalised
R_LOG_COST = 4  # log of the algorithm's cost after the round (no underflow)
R_EDGE = 5  # U_I - U_J: the learner-weighted edge (QuadBoost's g = <h, r>)
R_VAL_ERROR = 6  # weighted validation error after the round (NaN without a validation set)
N_FREC = 7

# Loop options: int64[N_OPTS]
OPT_CRITERION = 0  # CRITERION_*
OPT_FEATURE_RANK = 1  # use the k-th best feature (1: the best)
OPT_ADDITIVE = 2  # 0: w <- w exp(-alpha y h) / Z; 1: w holds residuals r <- r - alpha h (QuadBoost)
OPT_USE_Q = 3  # 1: build the w**2 / p histogram too (EBBoost)
OPT_PATIENCE = 4  # stop after this many rounds without a new best validation error (0: never)
OPT_MAX_DEPTH = 5  # 0: the stump fast path (binary); >= 1: the tree learner of this depth
OPT_MIN_SAMPLES_LEAF = 6  # rows with positive weight each leaf needs (trees)
OPT_N_CLASSES = 7  # classes the learner sees (2, or K for SAMME)
OPT_LEAF = 8  # LEAF_DISCRETE or LEAF_REAL (trees)
OPT_HIST_GROUPS = 9  # feature groups of the histogram passes (histogram.n_feature_groups; speed only)
OPT_U_IS_W = 10  # 1: the rule's transform is u = w, so the learner reads w and the transform is skipped
OPT_NEED_S2 = 11  # 1: the cost reads sum_i w_i**2 / p_i from the weight update
N_OPTS = 12

# Float loop options: float64[N_FOPTS]
FOPT_MIN_WEIGHT_LEAF = 0  # fraction of the round's learner weight each leaf needs (min_weight_fraction_leaf)
FOPT_LEAF_SCALE = 1  # kappa of confidence-rated leaves (1/2 AdaBoost, 1/4 VadaBoost)
FOPT_LEAF_SMOOTHING = 2  # delta of confidence-rated leaves, relative to the total learner weight
N_FOPTS = 3

# Loop state carried across calls: float64[N_STATE]
STATE_LOG_MEAN_LOSS = 0  # log(sum_i p_i exp(-y_i F(x_i))) (multiplicative rules)
STATE_N = 1  # number of examples with positive sample weight
STATE_PENALTY = 2  # QuadBoost: the penalty of the current weights
STATE_BEST_VAL = 3  # best validation error so far (inf before the first round)
STATE_BEST_T = 4  # number of rounds at the best validation error
STATE_SINCE_BEST = 5  # rounds since then
N_STATE = 6

# Stop-rule answers.
CONTINUE = 0  # keep the round and go on
REJECT = 1  # discard the round and stop (e.g. alpha <= 0)
ACCEPT_STOP = 2  # keep the round and stop (e.g. a perfect weak hypothesis)

# Why the loop returned (its second result).
RAN_ALL = 0  # the requested rounds ran
STOPPED_BY_RULE = 1  # the stop rule ended boosting
STOPPED_EARLY = 2  # no new best validation error for OPT_PATIENCE rounds
