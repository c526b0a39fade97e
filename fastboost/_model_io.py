"""Model files: ``estimator.save(path)`` and ``fastboost.load(path)``.

A model file is a zip archive holding ``header.json`` (format name and version, the
fastboost version that wrote it, and per model its estimator class, parameters, fitted
scalars and the list of arrays that follow) and one ``.npy`` member per fitted array,
written and read without pickle. A one-vs-rest model keeps each per-class model under
``estimators/<k>/``. ``docs/model-format.md`` describes the format.

Loading never executes code from the file: the estimator class is looked up in a
fixed table, parameters are checked by the estimator's own ``_check_params``, arrays
are read with ``allow_pickle=False`` and every dtype, shape and index is checked
against the header before the model is handed out, so a tampered file cannot make
the compiled prediction kernels read out of bounds. Whatever is wrong with a file,
``load`` raises a ``ValueError`` saying what.
"""
import io
import json
import math
import numbers
import os
import re
import secrets
import zipfile

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._types import MAX_CLASSES, NODE_DTYPE, ROUND_DTYPE
from ._version import __version__

FORMAT_NAME = "fastboost-model"
#: the newest format version this fastboost writes and reads
FORMAT_VERSION = 6
HEADER = "header.json"

#: the record fields each format version added (version 2: categorical splits; 3: the master LP's values;
#: 4: the rows the learner read). Version 5 added no record field: the array ``cover_`` (each node's cover, which
#: ``predict_contrib`` needs; older files load and predict without it). Version 6 added the array ``leaf_values_``
#: (SAMME.R's K-vector leaves) and the parameter ``multiclass``: an older file's AdaBoostClassifier of K > 2
#: classes loads with multiclass="ovr" when it is one-vs-rest (as leaf="real" was then), "joint" otherwise.
#: AdaBoostClassifier's parameter ``monotone_steps`` came without a new version (the records are the same): a
#: file without it loads with monotone_steps="forward", as its stumps were fitted (a warm start replays them so)
_ADDED_IN = {2: ("categorical", "cat_left"), 3: ("lp_value", "lp_beta", "n_active"), 4: ("n_seen",)}


def _records_of_version(dtype, version):
    """A record dtype as format ``version`` wrote it: the same fields in the same order, without those
    added later (read, then widened: new integer fields 0, new float fields NaN)."""
    later = {f for v, fields in _ADDED_IN.items() if v > version for f in fields}
    return np.dtype([(n, dtype.fields[n][0]) for n in dtype.names if n not in later], align=True)


#: the record dtypes of the older format versions, by version
_OLD_RECORDS = {version: {"ROUND_DTYPE": _records_of_version(ROUND_DTYPE, version),
                          "NODE_DTYPE": _records_of_version(NODE_DTYPE, version)}
                for version in range(1, FORMAT_VERSION)}

#: The classes a model file may name, by name: loading looks the class up here and never imports by name.
#: ``fastboost.estimators`` fills it (``register_model_class``) as it defines its public estimators.
ESTIMATOR_CLASSES = {}


def register_model_class(cls):
    """Class decorator: ``cls`` may be saved to and loaded from model files (by its name)."""
    ESTIMATOR_CLASSES[cls.__name__] = cls
    return cls

#: fitted scalar attributes and their JSON type
SCALARS = {
    "n_features_in_": "int",
    "n_estimators_": "int",
    "stopped_early_": "bool",
    "stopped_by_rule_": "bool",
    "stopped_by_callback_": "bool",
    "initial_cost_": "float",
    "objective_": "float",
    "lp_time_": "float",
    "nu_": "float",
    "C_": "float",
    "fit_time_": "float",
    "bin_time_": "float",
    "n_features_quantised_": "int",
    "validation_seed_": "int",
    "sampling_seed_": "int",
}
#: fitted array attributes (one ``.npy`` member each) and the dtype they must have (None: given by the header)
ARRAYS = {
    "classes_": None,
    "feature_names_in_": None,
    "is_categorical_": np.dtype(np.bool_),
    "rounds_": ROUND_DTYPE,
    "nodes_": NODE_DTYPE,
    "estimator_weights_": np.dtype(np.float64),
    "estimator_errors_": np.dtype(np.float64),
    "validation_errors_": np.dtype(np.float64),
    "cover_": np.dtype(np.float64),
    "leaf_values_": np.dtype(np.float64),
}
_RECORD_NAMES = {"rounds_": "ROUND_DTYPE", "nodes_": "NODE_DTYPE"}
_BINARY_REQUIRED = ("classes_", "rounds_", "estimator_weights_", "estimator_errors_")
_OVR_ARRAYS = ("classes_", "feature_names_in_", "is_categorical_")
#: one array per categorical feature f, ``categories_<f>``: its sorted categories (str or float64)
_CATEGORIES = re.compile(r"categories_(0|[1-9][0-9]{0,8})")
_CATEGORIES_DTYPE = re.compile(r"<f8|<U[1-9][0-9]{0,5}")
_RECORD_KEYS = {"estimator", "params", "notes", "attributes", "classes", "arrays", "estimators"}
_TOP_KEYS = {"format", "format_version", "fastboost_version", "saved_from", "model"}

#: how the class labels are kept: "array" (a NumPy array of this dtype, returned by predict as it is) or an
#: object array of one Python type, stored as the array dtype beside it
LABEL_KINDS = {"array": None, "object-str": "U", "object-int": "<i8", "object-bool": "|b1", "object-float": "<f8"}
_PY_TYPES = {"object-str": str, "object-int": int, "object-bool": bool, "object-float": float}
#: label dtypes an "array" model may have (bool, integers, floats, fixed-width str / bytes; little-endian)
_LABEL_DTYPE = re.compile(r"\|b1|\|[iu]1|<[iu][248]|<f[248]|<U[1-9][0-9]{0,5}|\|S[1-9][0-9]{0,5}")
_NAMES_DTYPE = re.compile(r"<U[1-9][0-9]{0,5}")

MAX_HEADER_BYTES = 256 * 2 ** 20
_NPY_HEADER_SLACK = 65536  # an .npy member may exceed its data by at most this (its own header)
_DATE_TIME = (1980, 1, 1, 0, 0, 0)  # fixed member times: saving the same model twice gives the same bytes


# ============================================================================ save
def save(estimator, path):
    """Write a fitted fastboost estimator to ``path`` (a file name or a binary file object).

    Dask estimators save their ``to_local()`` model (it loads as the single-machine class).
    Raises NotFittedError for an unfitted estimator and ValueError when something cannot be
    represented in the format (a parameter value, a label type), naming it.
    """

    saved_from = None
    if callable(getattr(estimator, "to_local", None)):
        check_is_fitted(estimator)
        saved_from = type(estimator).__name__
        estimator = estimator.to_local()
    members = {}
    model = _record(estimator, "", members)
    header = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "fastboost_version": __version__}
    if saved_from is not None:
        header["saved_from"] = saved_from
    header["model"] = model
    data = json.dumps(header, indent=1, allow_nan=False).encode("utf-8")
    if hasattr(path, "write"):
        _check_binary(path, "save", "wb")
        _write_zip(path, data, members)
        return
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"{path!r} is a directory: save a model to a file name (for example model.fbm).")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{path!r}: its directory {folder!r} does not exist.")
    # a new name beside the file, opened as open() opens files (the umask's permissions, as the file it replaces
    # would have had): replaced only by a complete file
    tmp = os.path.join(folder, f".fastboost-{os.getpid()}-{secrets.token_hex(6)}.tmp")
    try:
        with open(tmp, "xb") as f:
            _write_zip(f, data, members)
        os.replace(tmp, path)  # an existing file is replaced only by a complete one
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _check_binary(f, verb, mode):
    """TypeError for a file object opened in text mode (a model file is bytes)."""
    if isinstance(f, io.TextIOBase):
        raise TypeError(f"{verb} needs a file opened in binary mode (open(path, {mode!r}) or io.BytesIO); got "
                        f"a text-mode {type(f).__name__}.")


def _write_zip(f, header, members):
    with zipfile.ZipFile(f, "w") as zf:
        for name, data in [(HEADER, header), *members.items()]:
            info = zipfile.ZipInfo(name, date_time=_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)


def _record(est, prefix, members):
    """The header entry of one fitted model; its arrays go into ``members`` under ``prefix``."""
    cls = type(est)
    name = cls.__name__
    if ESTIMATOR_CLASSES.get(name) is not cls:
        public = next((c.__name__ for c in cls.__mro__ if ESTIMATOR_CLASSES.get(c.__name__) is c), None)
        raise ValueError(f"Only fastboost's own estimator classes can be saved ({', '.join(ESTIMATOR_CLASSES)}); "
                         f"got {cls.__module__}.{name}" + (f", a subclass of {public}." if public else "."))
    check_is_fitted(est)
    state = vars(est)
    unknown = [k for k in state if k.endswith("_") and not k.startswith("_") and k not in SCALARS
               and k not in ARRAYS and k not in ("estimators_", "categories_")]
    if unknown:
        raise ValueError(f"Cannot save {name}: its fitted attribute(s) {unknown} have no place in model format "
                         f"version {FORMAT_VERSION}.")
    notes = []
    rec = {"estimator": name, "params": _params_to_json(est, notes)}
    if notes:
        rec["notes"] = notes
    rec["attributes"] = {k: _scalar_to_json(k, state[k], kind) for k, kind in SCALARS.items() if k in state}
    arrays = {}
    labels, kind = _labels_to_array(state["classes_"])
    rec["classes"] = {"kind": kind}
    _add_array(members, prefix, arrays, "classes_", labels)
    if "feature_names_in_" in state:
        names = state["feature_names_in_"]
        if not all(isinstance(s, str) for s in names.tolist()):
            raise ValueError("Cannot save feature_names_in_: the feature names must all be strings.")
        stored = np.array(names.tolist(), dtype=np.str_) if names.shape[0] else np.empty(0, "<U1")
        if stored.tolist() != names.tolist():
            raise ValueError("Cannot save feature_names_in_: a feature name ends with a NUL character.")
        _add_array(members, prefix, arrays, "feature_names_in_", stored)
    if state.get("is_categorical_") is not None:
        _add_array(members, prefix, arrays, "is_categorical_", np.asarray(state["is_categorical_"], dtype=np.bool_))
        for f, cats in enumerate(state["categories_"]):
            if cats is not None:
                if cats.dtype.kind == "U" and cats.shape[0] == 0:
                    cats = np.empty(0, "<U1")
                if not _CATEGORIES_DTYPE.fullmatch(cats.dtype.str):
                    raise ValueError(f"Cannot save the categories of feature {f}: dtype {cats.dtype}.")
                _add_array(members, prefix, arrays, f"categories_{f}", cats)
    if "estimators_" in state:
        rec["estimators"] = [_record(m, f"{prefix}estimators/{k}/", members)
                             for k, m in enumerate(state["estimators_"])]
    else:
        for attr in ("rounds_", "nodes_", "estimator_weights_", "estimator_errors_", "validation_errors_", "cover_",
                     "leaf_values_"):
            if state.get(attr) is not None:
                value = state[attr]
                if not isinstance(value, np.ndarray) or value.dtype != ARRAYS[attr]:
                    raise ValueError(f"Cannot save {attr}: expected an array of dtype {ARRAYS[attr]}, got "
                                     f"{type(value).__name__} {getattr(value, 'dtype', '')}.")
                _add_array(members, prefix, arrays, attr, value)
    rec["arrays"] = arrays
    return rec


def _add_array(members, prefix, arrays, attr, value):
    value = np.ascontiguousarray(value)
    buf = io.BytesIO()
    np.save(buf, value, allow_pickle=False)
    members[f"{prefix}{attr}.npy"] = buf.getvalue()
    arrays[attr] = {"dtype": _RECORD_NAMES.get(attr, value.dtype.str), "shape": list(value.shape)}


def _params_to_json(est, notes):
    out = {}
    for name, value in est.get_params(deep=False).items():
        if name == "random_state" and value is not None and not isinstance(value, numbers.Integral):
            notes.append(f"random_state was a {type(value).__name__}, which a model file cannot hold; it is "
                         "saved as None (it only seeds fitting, never prediction).")
            value = None
        if isinstance(value, dict):  # class_weight: {label: weight}
            out[name] = {"dict": [[_param_scalar(f"{name} key", k), _param_scalar(f"{name}[{k!r}]", w)]
                                  for k, w in value.items()]}
        elif name == "interaction_constraints" and value is not None:  # groups of feature indices or names
            out[name] = {"groups": [[_param_scalar(f"{name}[{j}]", x) for x in (np.asarray(g).tolist()
                                     if isinstance(g, np.ndarray) else list(g))] for j, g in enumerate(value)]}
        elif name in ("categorical_features", "monotone_constraints") and isinstance(value, (list, tuple, np.ndarray)):
            # a mask, indices or names; a direction per feature
            out[name] = {"list": [_param_scalar(f"{name}[{i}]", x) for i, x in enumerate(np.asarray(value).tolist())]}
        else:
            out[name] = _param_scalar(name, value)
    return out


def _param_scalar(name, value):
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"Cannot save parameter {name}={value}: a model file holds finite numbers only.")
        return value
    raise ValueError(f"Cannot save parameter {name}: a value of type {type(value).__name__} has no representation "
                     "in a model file (None, bool, int, float, str and dicts of these have).")


def _scalar_to_json(name, value, kind):
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"Cannot save {name}: expected a bool, got {type(value).__name__}.")
        return bool(value)
    if kind == "int":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise ValueError(f"Cannot save {name}: expected an int, got {type(value).__name__}.")
        return int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"Cannot save {name}: expected a float, got {type(value).__name__}.")
    value = float(value)
    return value if math.isfinite(value) else repr(value)  # "nan", "inf", "-inf"


def _labels_to_array(classes):
    """(array without Python objects, label kind) for ``classes_``; ValueError if the labels cannot be stored."""
    if classes.dtype.kind != "O":
        dtype = classes.dtype
        if dtype.byteorder == ">":
            dtype = dtype.newbyteorder("<")
        stored = classes.astype(dtype)
        if not _LABEL_DTYPE.fullmatch(stored.dtype.str):
            raise ValueError(f"Cannot save class labels of dtype {classes.dtype}: a model file holds labels of "
                             "bool, integer, float, str or bytes dtype.")
        return stored, "array"
    values = classes.tolist()
    types = {type(v) for v in values}
    if all(isinstance(v, str) for v in values):
        kind, stored = "object-str", np.array(values, dtype=np.str_)
    elif types == {bool}:
        kind, stored = "object-bool", np.array(values, dtype=np.bool_)
    elif types == {float}:
        kind, stored = "object-float", np.array(values, dtype=np.float64)
    elif types == {int} and all(-2 ** 63 <= v < 2 ** 63 for v in values):
        kind, stored = "object-int", np.array(values, dtype=np.int64)
    else:
        names = sorted(t.__name__ for t in types)
        raise ValueError(f"Cannot save class labels of types {names} (an object array): a model file holds labels "
                         "that are all str, all bool, all int (64-bit) or all float.")
    if stored.tolist() != values:
        raise ValueError("Cannot save the class labels: a label changes when stored (a str ending with a NUL "
                         "character?).")
    return stored, kind


# ============================================================================ load
class _Invalid(Exception):
    """A problem with the file, already worded; ``load`` turns it into a ValueError."""


def load(path):
    """Load a model written by ``estimator.save(path)``.

    ``path``: a file name or a binary file object. Returns a fitted estimator of the saved class
    (a Dask estimator's model loads as the single-machine class). Raises ValueError for anything
    that is not a valid fastboost model file of a format version this fastboost reads (a truncated,
    corrupted or altered file, another kind of file, a newer format), saying what is wrong;
    FileNotFoundError (or another OSError) if the file cannot be opened. Loading never unpickles
    and never executes anything from the file.
    """
    if hasattr(path, "read"):
        _check_binary(path, "load", "rb")
        return _load_checked(path, "model file")
    where = f"model file {os.fspath(path)!r}"
    if os.path.isdir(path):
        raise ValueError(f"{where} is a directory, not a fastboost model file.")
    with open(path, "rb") as f:
        return _load_checked(f, where)


def _load_checked(f, where):
    try:
        return _load(f)
    except _Invalid as e:
        raise ValueError(f"{where}: {e}") from None
    except Exception as e:  # anything else means damage the checks did not name; never KeyboardInterrupt
        raise ValueError(f"{where}: the file is damaged: {type(e).__name__}: {e}") from e


def _load(f):
    try:
        zf = zipfile.ZipFile(f)
    except Exception as e:
        raise _Invalid(f"not a fastboost model file (not a readable zip archive: {e}).") from None
    with zf:
        names = zf.namelist()
        if len(set(names)) != len(names):
            raise _Invalid("not a valid model file: the zip archive holds a member name twice.")
        if HEADER not in names:
            raise _Invalid(f"not a fastboost model file (no {HEADER} member).")
        header = _read_header(zf)
        used = {HEADER}
        est = _read_record(zf, header["model"], "", used, parent=None, version=header["format_version"])
        extra = sorted(set(names) - used)
        if extra:
            raise _Invalid(f"unexpected member(s) {extra[:5]}: the header lists no such array.")
    return est


def _read_header(zf):
    info = zf.getinfo(HEADER)
    if info.file_size > MAX_HEADER_BYTES:
        raise _Invalid(f"{HEADER} is {info.file_size} bytes, more than a model header can be.")
    try:
        text = zf.read(HEADER).decode("utf-8")
    except UnicodeDecodeError:
        raise _Invalid(f"not a fastboost model file ({HEADER} is not UTF-8 text).") from None

    def no_constant(name):
        raise _Invalid(f"{HEADER} is not valid JSON (it contains {name}).")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise _Invalid(f"{HEADER} repeats a key.")
        return dict(pairs)

    try:
        header = json.loads(text, parse_constant=no_constant, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as e:
        raise _Invalid(f"not a fastboost model file ({HEADER} is not valid JSON: {e}).") from None
    except RecursionError:
        raise _Invalid(f"{HEADER} is nested too deeply.") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        found = header.get("format") if isinstance(header, dict) else None
        raise _Invalid(f"not a fastboost model file ({HEADER} names format {found!r}, not {FORMAT_NAME!r}).")
    version = header.get("format_version")
    if not _is_int(version) or version < 1:
        raise _Invalid(f"{HEADER}: format_version must be an int >= 1, got {version!r}.")
    if version > FORMAT_VERSION:

        raise _Invalid(f"the file has model format version {version}, newer than version {FORMAT_VERSION}, the "
                       f"newest this fastboost ({__version__}) reads; it was written by fastboost "
                       f"{header.get('fastboost_version')!s}: upgrade fastboost to load it.")
    unknown = sorted(set(header) - _TOP_KEYS)
    if unknown:
        raise _Invalid(f"{HEADER}: unknown field(s) {unknown} in a format version {version} header.")
    for key in ("fastboost_version", "saved_from"):
        if key in header and not isinstance(header[key], str):
            raise _Invalid(f"{HEADER}: {key} must be a string, got {header[key]!r}.")
    if "fastboost_version" not in header:
        raise _Invalid(f"{HEADER}: fastboost_version is missing.")
    if "model" not in header:
        raise _Invalid(f"{HEADER}: the model entry is missing.")
    return header


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _read_record(zf, rec, prefix, used, parent, version=FORMAT_VERSION):
    """The fitted estimator described by header entry ``rec`` (arrays under ``prefix``), every part checked."""
    where = f"{HEADER}: model {prefix or '(top level)'}"
    if not isinstance(rec, dict):
        raise _Invalid(f"{where}: expected an object, got {type(rec).__name__}.")
    unknown = sorted(set(rec) - _RECORD_KEYS)
    missing = sorted({"estimator", "params", "attributes", "classes", "arrays"} - set(rec))
    if unknown or missing:
        raise _Invalid(f"{where}: " + "; ".join(([f"unknown field(s) {unknown}"] if unknown else [])
                                                + ([f"missing field(s) {missing}"] if missing else [])) + ".")
    # ---- class and parameters
    name = rec["estimator"]
    cls = ESTIMATOR_CLASSES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise _Invalid(f"{where}: unknown estimator class {name!r}; a model file holds one of "
                       f"{sorted(ESTIMATOR_CLASSES)}.")
    if parent is not None and cls is not type(parent):
        raise _Invalid(f"{where}: a one-vs-rest {type(parent).__name__} holds a {name}.")
    est = cls()
    params = rec["params"]
    if not isinstance(params, dict):
        raise _Invalid(f"{where}: params must be an object.")
    allowed = est.get_params(deep=False)
    params = {key: _param_from_json(f"{where}: parameter {key!r}", value) for key, value in params.items()}
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise _Invalid(f"{where}: {name} has no parameter(s) {unknown}.")
    if version < 6 and "multiclass" in allowed and "estimators" in rec:
        params["multiclass"] = "ovr"  # (the one-vs-rest model of K > 2 classes an older fastboost fitted)
    if "monotone_steps" in allowed and "monotone_steps" not in params:
        params["monotone_steps"] = "forward"  # (written before the parameter: its stumps took no steps back)
    est.set_params(**params)
    try:
        est._check_params()
    except (TypeError, ValueError) as e:
        raise _Invalid(f"{where}: invalid parameter: {e}") from None
    from ._params import fitted_params

    est._fitted_params = fitted_params(est)  # (a warm start names a parameter changed since)
    if "notes" in rec and not (isinstance(rec["notes"], list) and all(isinstance(n, str) for n in rec["notes"])):
        raise _Invalid(f"{where}: notes must be a list of strings.")
    # ---- scalars
    attrs = rec["attributes"]
    if not isinstance(attrs, dict):
        raise _Invalid(f"{where}: attributes must be an object.")
    scalars = {}
    for key, value in attrs.items():
        if key not in SCALARS:
            raise _Invalid(f"{where}: unknown fitted attribute {key!r}.")
        scalars[key] = _scalar_from_json(f"{where}: {key}", value, SCALARS[key])
    for key in ("n_features_in_", "n_estimators_"):
        if key not in scalars:
            raise _Invalid(f"{where}: the fitted attribute {key} is missing.")
    n_features = scalars["n_features_in_"]
    n_rounds = scalars["n_estimators_"]
    if n_features < 1:
        raise _Invalid(f"{where}: n_features_in_ must be >= 1, got {n_features}.")
    if n_rounds < 0:
        raise _Invalid(f"{where}: n_estimators_ must be >= 0, got {n_rounds}.")
    for key in ("validation_seed_", "sampling_seed_"):  # (drawn below 2**31 - 1)
        if not 0 <= scalars.get(key, 0) < 2 ** 31 - 1:
            raise _Invalid(f"{where}: {key} must be in [0, 2**31 - 1), got {scalars[key]}.")
    # ---- which arrays follow, and their declared dtypes and shapes
    arrays = rec["arrays"]
    if not isinstance(arrays, dict):
        raise _Invalid(f"{where}: arrays must be an object.")
    ovr = "estimators" in rec
    if ovr and parent is not None:
        raise _Invalid(f"{where}: a one-vs-rest model's per-class models cannot be one-vs-rest.")
    allowed_arrays = _OVR_ARRAYS if ovr else tuple(ARRAYS)
    required = ("classes_",) if ovr else _BINARY_REQUIRED
    for key in arrays:
        if key not in allowed_arrays and not _CATEGORIES.fullmatch(key):
            raise _Invalid(f"{where}: unexpected array {key!r}" + (" in a one-vs-rest model." if ovr else "."))
    for key in required:
        if key not in arrays:
            raise _Invalid(f"{where}: the array {key} is missing.")
    classes_info = rec["classes"]
    if not isinstance(classes_info, dict) or set(classes_info) != {"kind"} or \
            classes_info["kind"] not in LABEL_KINDS:
        raise _Invalid(f"{where}: classes must be {{\"kind\": one of {list(LABEL_KINDS)}}}, got {classes_info!r}.")
    label_kind = classes_info["kind"]
    decl = {key: _declared(f"{where}: arrays.{key}", entry) for key, entry in arrays.items()}
    dtypes = {}
    for key, (dtype_name, shape) in decl.items():
        if key == "classes_":
            want = LABEL_KINDS[label_kind]
            ok = _LABEL_DTYPE.fullmatch(dtype_name) and (want is None or dtype_name == want
                                                         or want == "U" and dtype_name.startswith("<U"))
            if not ok:
                raise _Invalid(f"{where}: classes_ of kind {label_kind!r} cannot have dtype {dtype_name!r}.")
            dtypes[key] = np.dtype(dtype_name)
            n_classes = shape[0] if len(shape) == 1 else -1
            if not 2 <= n_classes <= MAX_CLASSES:
                raise _Invalid(f"{where}: classes_ must have shape [K] with 2 <= K <= {MAX_CLASSES}, got {shape}.")
        elif _CATEGORIES.fullmatch(key):
            f = int(key[len("categories_"):])
            if f >= n_features or not _CATEGORIES_DTYPE.fullmatch(dtype_name) or len(shape) != 1 \
                    or shape[0] > 255:
                raise _Invalid(f"{where}: {key} must be the categories (<f8 or <U, at most 255) of a feature < "
                               f"{n_features}, got dtype {dtype_name!r}, shape {shape}.")
            dtypes[key] = np.dtype(dtype_name)
        elif key == "is_categorical_":
            if dtype_name != "|b1":
                raise _Invalid(f"{where}: is_categorical_ must have dtype '|b1', got {dtype_name!r}.")
            dtypes[key] = ARRAYS[key]
            _expect_shape(where, key, shape, (n_features,))
        elif key == "feature_names_in_":
            if not _NAMES_DTYPE.fullmatch(dtype_name):
                raise _Invalid(f"{where}: feature_names_in_ must have a '<U' (str) dtype, got {dtype_name!r}.")
            dtypes[key] = np.dtype(dtype_name)
            _expect_shape(where, key, shape, (n_features,))
        else:
            expected = _RECORD_NAMES.get(key, ARRAYS[key].str)
            if dtype_name != expected:
                raise _Invalid(f"{where}: {key} must have dtype {expected!r}, got {dtype_name!r}.")
            dtypes[key] = (_OLD_RECORDS[version][expected] if version < FORMAT_VERSION and key in _RECORD_NAMES
                           else ARRAYS[key])
            if key == "nodes_":
                if len(shape) != 2 or shape[0] != n_rounds or not _tree_depth(shape[1]):
                    raise _Invalid(f"{where}: nodes_ must have shape [n_estimators_ = {n_rounds}, 2**(d + 1) - 1] "
                                   f"for a depth d in [1, 8], got {shape}.")
            elif key == "validation_errors_":
                if len(shape) != 1 or shape[0] < n_rounds:
                    raise _Invalid(f"{where}: validation_errors_ must have shape [n] with n >= n_estimators_ = "
                                   f"{n_rounds}, got {shape}.")
            elif key == "leaf_values_":
                if version < 6:
                    raise _Invalid(f"{where}: leaf_values_ first appears in format version 6, not {version}.")
                if len(shape) != 3 or shape[0] != n_rounds:
                    raise _Invalid(f"{where}: leaf_values_ must have shape [n_estimators_ = {n_rounds}, the number "
                                   f"of tree nodes, the number of classes], got {shape}.")
            elif key == "cover_":
                if version < 5:
                    raise _Invalid(f"{where}: cover_ first appears in format version 5, not {version}.")
                if len(shape) != 2 or shape[0] != n_rounds:
                    raise _Invalid(f"{where}: cover_ must have shape [n_estimators_ = {n_rounds}, 2 or the "
                                   f"number of tree nodes], got {shape}.")
            else:
                _expect_shape(where, key, shape, (n_rounds,))
    # ---- the arrays themselves
    values = {}
    for key, (_, shape) in decl.items():
        member = f"{prefix}{key}.npy"
        values[key] = _read_npy(zf, member, dtypes[key], tuple(shape))
        if key in _RECORD_NAMES and values[key].dtype != ARRAYS[key]:  # an older version's records
            widened = np.zeros(values[key].shape, ARRAYS[key])
            for field in ARRAYS[key].names:
                if field in values[key].dtype.names:
                    widened[field] = values[key][field]
                elif widened[field].dtype.kind == "f":
                    widened[field] = np.nan
            values[key] = widened
        used.add(member)
    classes = values["classes_"]
    if not np.all(classes[1:] > classes[:-1]):
        raise _Invalid(f"{prefix}classes_.npy: the class labels must be unique and sorted.")
    n_classes = classes.shape[0]
    if label_kind != "array":
        labels = np.empty(n_classes, dtype=object)
        labels[:] = [_PY_TYPES[label_kind](v) for v in classes.tolist()]
        classes = labels
    state = {}
    if "feature_names_in_" in values:
        names = np.empty(n_features, dtype=object)
        names[:] = values["feature_names_in_"].tolist()
        state["feature_names_in_"] = names
    state["n_features_in_"] = n_features
    state["classes_"] = classes
    is_cat = values.get("is_categorical_")
    cat_keys = {int(k[len("categories_"):]) for k in values if _CATEGORIES.fullmatch(k)}
    if (is_cat is None and cat_keys) or (is_cat is not None and cat_keys != set(np.flatnonzero(is_cat).tolist())):
        raise _Invalid(f"{where}: categories_<f> arrays must be given exactly for the features is_categorical_ "
                       "marks.")
    state["is_categorical_"] = is_cat if is_cat is not None and is_cat.any() else None
    state["categories_"] = None
    if state["is_categorical_"] is not None:
        cats = [values.get(f"categories_{f}") for f in range(n_features)]
        for f, c in enumerate(cats):
            if c is not None and (c.shape[0] and not np.all(c[1:] > c[:-1]) or c.dtype.kind == "f"
                                  and np.isnan(c).any()):
                raise _Invalid(f"{prefix}categories_{f}.npy: the categories must be unique, sorted and not NaN.")
        state["categories_"] = cats
    if n_classes > 2 and parent is None and cls._samme:  # one model per class, or one for all, as its parameters say
        try:
            joint = est._joint_multiclass()
        except ValueError as e:
            raise _Invalid(f"{where}: invalid parameter: {e}") from None
        if joint == ovr:
            raise _Invalid(f"{where}: its parameters (multiclass={est.multiclass!r}, leaf={est.leaf!r}) fit "
                           + ("one model for all classes, but it holds one per class." if joint else
                              "one model per class, but it holds one for all."))
    if ovr:
        subs = rec["estimators"]
        if not isinstance(subs, list) or len(subs) != n_classes or n_classes < 3:
            raise _Invalid(f"{where}: a one-vs-rest model holds one model per class ({n_classes} classes, at least "
                           f"3), got {len(subs) if isinstance(subs, list) else type(subs).__name__}.")
        models = [_read_record(zf, sub, f"{prefix}estimators/{k}/", used, parent=est, version=version)
                  for k, sub in enumerate(subs)]
        for k, m in enumerate(models):
            # (with categorical features the per-class models are fitted on category indices, without names)
            same = _same_names(m, state.get("feature_names_in_")) or (
                state["is_categorical_"] is not None and getattr(m, "feature_names_in_", None) is None)
            if m.n_features_in_ != n_features or not same:
                raise _Invalid(f"{where}: model estimators/{k}/ was fitted on other features than its one-vs-rest "
                               "model.")
        if sum(m.n_estimators_ for m in models) != n_rounds:
            raise _Invalid(f"{where}: n_estimators_ = {n_rounds} is not the sum of the per-class models' rounds.")
        state["estimators_"] = models
    else:
        if parent is not None and (label_kind != "array" or classes.dtype.kind not in "iu"
                                   or classes.tolist() != [0, 1]):
            raise _Invalid(f"{where}: a one-vs-rest model's per-class model must have the integer classes_ [0, 1].")
        rounds = values["rounds_"]
        _check_features(f"{prefix}rounds_.npy", rounds["feature"], n_features, low=0)
        _check_numbers(f"{prefix}rounds_.npy", rounds, ("alpha",), rounds["feature"] >= 0)
        nodes = values.get("nodes_")
        if nodes is not None:
            _check_trees(f"{prefix}nodes_.npy", nodes, n_features, n_classes)
        elif n_classes > 2:
            raise _Invalid(f"{where}: a model of {n_classes} classes (SAMME) needs its trees (nodes_).")
        depth = 1 if nodes is None else _tree_depth(nodes.shape[1])
        if depth != est.max_depth:
            raise _Invalid(f"{where}: its parameter max_depth = {est.max_depth} does not match its " + (
                "decision stumps (max_depth = 1)." if nodes is None else f"trees of depth {depth} (nodes_)."))
        for key, recs in (("rounds_", rounds), ("nodes_", nodes)):
            if recs is not None:
                _check_categorical(f"{prefix}{key}.npy", recs, state["is_categorical_"])
        if n_classes > 2 and not cls._samme:
            raise _Invalid(f"{where}: a {name} of {n_classes} classes is one-vs-rest (one model per class), "
                           "not a single model.")
        state["rounds_"] = rounds
        state["n_estimators_"] = n_rounds
        state["estimator_weights_"] = values["estimator_weights_"]
        state["estimator_errors_"] = values["estimator_errors_"]
        state["nodes_"] = nodes
        vector = n_classes > 2 and getattr(est, "leaf", "discrete") == "real"  # SAMME.R: K-vector leaves
        leaf_values = values.get("leaf_values_")
        if vector != (leaf_values is not None):
            raise _Invalid(f"{where}: " + ("a SAMME.R model (leaf='real', K > 2 classes) needs its leaf values "
                                           "(leaf_values_)." if vector else "only a SAMME.R model (leaf='real', "
                                           "K > 2 classes) has leaf values (leaf_values_)."))
        if vector:
            if leaf_values.shape[1:] != (nodes.shape[1], n_classes):
                raise _Invalid(f"{where}: leaf_values_ must have shape [{n_rounds}, {nodes.shape[1]}, {n_classes}], "
                               f"got {list(leaf_values.shape)}.")
            if not np.all(np.isfinite(leaf_values)):
                raise _Invalid(f"{prefix}leaf_values_.npy: the leaf values must be finite.")
        _check_score_bound(prefix, rounds, nodes, leaf_values, n_classes)
        state["leaf_values_"] = leaf_values
        if "validation_errors_" in values:
            state["validation_errors_"] = values["validation_errors_"]
        if "cover_" in values:
            cover = values["cover_"]
            width = 2 if nodes is None else nodes.shape[1]
            if cover.shape[1] != width:
                raise _Invalid(f"{where}: cover_ must have shape [{n_rounds}, {width}] (" + (
                    "two sides per stump" if nodes is None else "one per tree node") + f"), got {list(cover.shape)}.")
            if not np.all(np.isfinite(cover) & (cover >= 0)):
                raise _Invalid(f"{prefix}cover_.npy: the covers must be finite and >= 0.")
            state["cover_"] = cover
    for key, value in scalars.items():
        state.setdefault(key, value)
    for key, value in state.items():
        setattr(est, key, value)
    if not ovr:
        est._n_classes = n_classes  # as fit leaves it
    return est


def _is_scalar(value):
    return value is None or isinstance(value, (bool, int, float, str))


def _param_from_json(where, value):
    """A parameter value: a JSON scalar, {"dict": [[key, value], ...]} for a dict (class_weight,
    monotone_constraints by name), {"list": [...]} for a list of scalars (categorical_features,
    monotone_constraints) or {"groups": [[...], ...]} for lists of them (interaction_constraints)."""
    if _is_scalar(value):
        return value
    if isinstance(value, dict) and set(value) == {"list"} and isinstance(value["list"], list) and all(
            _is_scalar(item) for item in value["list"]):
        return list(value["list"])
    if isinstance(value, dict) and set(value) == {"groups"} and isinstance(value["groups"], list) and all(
            isinstance(g, list) and all(_is_scalar(item) for item in g) for g in value["groups"]):
        return [list(g) for g in value["groups"]]
    if isinstance(value, dict) and set(value) == {"dict"} and isinstance(value["dict"], list) and all(
            isinstance(item, list) and len(item) == 2 and _is_scalar(item[0]) and _is_scalar(item[1])
            for item in value["dict"]):
        out = dict(value["dict"])
        if len(out) != len(value["dict"]):
            raise _Invalid(f"{where}: a dict repeats a key.")
        return out
    raise _Invalid(f"{where}: expected null, a bool, number or string, {{\"list\": [...]}} or "
                   f"{{\"dict\": [[key, value], ...]}}; "
                   f"got {value!r:.80}.")


def _same_names(model, names):
    own = getattr(model, "feature_names_in_", None)
    if names is None or own is None:
        return names is None and own is None
    return own.tolist() == names.tolist()


def _declared(where, entry):
    """(dtype name, shape) of a header ``arrays`` entry."""
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape"}:
        raise _Invalid(f"{where} must be {{\"dtype\": ..., \"shape\": [...]}}, got {entry!r}.")
    dtype_name, shape = entry["dtype"], entry["shape"]
    if not isinstance(dtype_name, str):
        raise _Invalid(f"{where}: dtype must be a string, got {dtype_name!r}.")
    if not (isinstance(shape, list) and 1 <= len(shape) <= 3 and all(_is_int(s) and 0 <= s < 2 ** 62
                                                                      for s in shape)):
        raise _Invalid(f"{where}: shape must be a list of 1 to 3 non-negative ints, got {shape!r}.")
    return dtype_name, shape


def _expect_shape(where, key, shape, expected):
    if tuple(shape) != expected:
        raise _Invalid(f"{where}: {key} must have shape {list(expected)}, got {shape}.")


def _tree_depth(n_nodes):
    """d if n_nodes == 2**(d + 1) - 1 for a tree depth d in [1, 8], else 0."""
    from ._params import MAX_DEPTH

    for d in range(1, MAX_DEPTH + 1):
        if n_nodes == 2 ** (d + 1) - 1:
            return d
    return 0


def _scalar_from_json(where, value, kind):
    if kind == "bool":
        if not isinstance(value, bool):
            raise _Invalid(f"{where} must be true or false, got {value!r}.")
        return value
    if kind == "int":
        if not _is_int(value):
            raise _Invalid(f"{where} must be an int, got {value!r}.")
        return value
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f"{where} must be a number (or \"nan\", \"inf\", \"-inf\"), got {value!r}.")
    return float(value)


def _read_npy(zf, member, dtype, shape):
    """The array in ``member``: an .npy file of exactly this dtype and shape (no pickle), as a fresh C array."""
    try:
        info = zf.getinfo(member)
    except KeyError:
        raise _Invalid(f"the member {member} is missing.") from None
    nbytes = dtype.itemsize * math.prod(shape)
    if info.file_size > nbytes + _NPY_HEADER_SLACK:
        raise _Invalid(f"{member} is {info.file_size} bytes, more than an array of shape {list(shape)} and dtype "
                       f"{dtype} takes.")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _Invalid(f"{member} uses zip compression method {info.compress_type}; model files use stored (0) or "
                       "deflate (8).")
    try:
        data = zf.read(member)  # checks the CRC
    except zipfile.BadZipFile as e:
        raise _Invalid(f"{member} is damaged ({e}).") from None
    buf = io.BytesIO(data)
    fmt = np.lib.format
    try:
        version = fmt.read_magic(buf)
        if version == (1, 0):
            file_shape, _, file_dtype = fmt.read_array_header_1_0(buf)
        elif version == (2, 0):
            file_shape, _, file_dtype = fmt.read_array_header_2_0(buf)
        else:
            raise _Invalid(f"{member}: .npy format version {version} is not used by model files.")
    except ValueError as e:
        raise _Invalid(f"{member} is not a valid .npy array ({e}).") from None
    if file_dtype != dtype or file_dtype.hasobject:
        raise _Invalid(f"{member} holds dtype {file_dtype}, expected {dtype}.")
    if tuple(file_shape) != shape:
        raise _Invalid(f"{member} has shape {list(file_shape)}, but the header says {list(shape)}.")
    if buf.tell() + nbytes != len(data):
        raise _Invalid(f"{member} has {len(data) - buf.tell()} bytes of array data, expected {nbytes}.")
    buf.seek(0)
    arr = np.load(buf, allow_pickle=False)
    if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.shape != shape:
        raise _Invalid(f"{member} does not hold the array the header describes.")
    # a writable C-order copy whose dtype is the expected dtype object itself (aligned records, as fit leaves them)
    return arr.copy(order="C").view(dtype)


def _check_features(member, feature, n_features, low):
    bad = (feature < low) | (feature >= n_features)
    if np.any(bad):
        i = np.flatnonzero(bad.reshape(-1))[0]
        raise _Invalid(f"{member}: feature index {int(feature.reshape(-1)[i])} out of range [{low}, {n_features}) "
                       f"(record {i}).")


def _check_categorical(member, recs, is_categorical):
    """Categorical splits (categorical = 1) only on the categorical features; the flag 0 or 1."""
    flag = recs["categorical"]
    bad = (flag != 0) & (flag != 1)
    if is_categorical is None:
        bad |= flag != 0
    else:
        bad |= (flag == 1) & ~is_categorical[np.clip(recs["feature"], 0, is_categorical.shape[0] - 1)]
    if np.any(bad):
        i = np.flatnonzero(bad.reshape(-1))[0]
        raise _Invalid(f"{member}: record {i}: a categorical split must be 0 or 1, and 1 only on a categorical "
                       "feature.")


def _check_trees(member, nodes, n_features, n_classes):
    """Every index the tree kernels follow is in range: children after their parent and inside the tree, split
    features < n_features, every path from the root ends at a leaf within the tree's depth, and (K > 2 classes)
    every reachable leaf names a class < K."""
    n_trees, n_nodes = nodes.shape
    depth_limit = _tree_depth(n_nodes)
    left, right, feature = nodes["left"], nodes["right"], nodes["feature"]
    index = np.arange(n_nodes)
    internal = left >= 0
    leaf = ~internal

    def fail(mask, what):
        t, j = np.argwhere(mask)[0]
        raise _Invalid(f"{member}: tree {t}, node {j}: {what}.")

    if np.any(leaf & ((left != -1) | (right != -1))):
        fail(leaf & ((left != -1) | (right != -1)), "a leaf must have left = right = -1")
    bad_child = internal & ((left <= index) | (left >= n_nodes) | (right <= index) | (right >= n_nodes))
    if np.any(bad_child):
        fail(bad_child, f"child index out of range (children follow their node and are < {n_nodes})")
    _check_features(member, np.where(internal, feature, 0), n_features, low=0)
    _check_features(member, feature, n_features, low=-1)
    depth = np.full((n_trees, n_nodes), -1, dtype=np.int64)
    depth[:, 0] = 0
    rows = np.arange(n_trees)
    for j in range(n_nodes):  # children follow their node: one forward pass sets every reachable node's depth
        go = (depth[:, j] >= 0) & internal[:, j]
        if not np.any(go):
            continue
        r = rows[go]
        d = depth[r, j] + 1
        for child in (left[r, j], right[r, j]):
            depth[r, child] = np.maximum(depth[r, child], d)
    reachable = depth >= 0
    too_deep = reachable & internal & (depth >= depth_limit)
    if np.any(too_deep):
        fail(too_deep, f"a split at depth {depth_limit} or deeper in a tree of {n_nodes} node slots")
    if n_classes > 2:
        cls = nodes["class_"]
        bad = reachable & leaf & ((cls < 0) | (cls >= n_classes))
        if np.any(bad):
            fail(bad, f"a leaf's class index is out of range [0, {n_classes})")
    if np.any(reachable & leaf & ~np.isfinite(nodes["value"])):
        fail(reachable & leaf & ~np.isfinite(nodes["value"]), "a leaf's value must be finite")
    _check_numbers(member, nodes, (), reachable & internal)


#: the most the magnitudes of a model's steps may sum to (its scores, sums of steps times votes or leaves, then stay
#: far from overflowing; a fit's steps sum to a few thousand at most: one whose weights overflow is refused)
MAX_ALPHA_SUM = 1e300


def _check_score_bound(prefix, rounds, nodes, leaf_values, n_classes):
    """The most a score can reach, the sum over the rounds of |alpha| times the round's largest output (a stump's
    sides, a tree's leaf values, 1 for a leaf that names a class), is at most ``MAX_ALPHA_SUM``: finite steps and
    leaves of a huge size would overflow the scores to NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        if leaf_values is not None:
            out = np.abs(leaf_values).max(axis=(1, 2), initial=0.0)
            member = "leaf_values_.npy"
        elif nodes is None:
            out = np.maximum(np.abs(rounds["left"].astype(np.float64)), np.abs(rounds["right"].astype(np.float64)))
            member = "rounds_.npy"
        elif n_classes > 2:
            out = np.ones(rounds.shape[0])
            member = "nodes_.npy"
        else:  # (unreachable leaves are not checked to be finite, and never read)
            value = nodes["value"]
            out = np.where((nodes["left"] == -1) & np.isfinite(value), np.abs(value), 0.0).max(axis=1, initial=0.0)
            member = "nodes_.npy"
        bound = (np.abs(rounds["alpha"]) * out).sum()
    if not bound <= MAX_ALPHA_SUM:
        raise _Invalid(f"{prefix}{member}: the steps times their rounds' largest outputs sum to more than "
                       f"{MAX_ALPHA_SUM:g}: the model's scores would overflow (NaN).")


def _check_numbers(member, records, finite, split):
    """The fields ``finite`` of every record are finite, and the records where ``split`` holds that split a numeric
    feature have a threshold that is not NaN (a categorical split's is NaN; ±inf are thresholds like any other):
    prediction reads them as they are."""
    for field in finite:
        if not np.all(np.isfinite(records[field])):
            raise _Invalid(f"{member}: the field {field!r} must be finite.")
    with np.errstate(over="ignore"):  # (an overflowing sum is inf: refused)
        alpha_sum = np.abs(records["alpha"]).sum() if "alpha" in finite else 0.0
    if not alpha_sum <= MAX_ALPHA_SUM:  # (the scores add the steps up)
        raise _Invalid(f"{member}: the steps' magnitudes 'alpha' sum to more than {MAX_ALPHA_SUM:g}: the model's "
                       "scores would overflow (NaN).")
    if np.any(np.isnan(records["threshold"][split & (records["categorical"] == 0)])):
        raise _Invalid(f"{member}: a numeric split's threshold must not be NaN.")
