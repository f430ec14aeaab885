"""hlm: distance-based classification by Hypothetical Local Mapping.

Reference implementation of Qiao & Li, "Distance-based Mixture Modeling for
Classification via Hypothetical Local Mapping". Estimators work on
precomputed distance matrices and follow scikit-learn conventions.
"""

from hlm.errors import ConfigError, DataError, HLMError

__all__ = ["HLMError", "ConfigError", "DataError"]
__version__ = "0.1.0"
