import os

# scikit-learn's check_array_api_input (numpy namespace) runs only when SciPy's
# array-API mode is on; it must be set before SciPy is first imported.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
