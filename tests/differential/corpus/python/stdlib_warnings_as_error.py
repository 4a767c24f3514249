import warnings

warnings.simplefilter("error")
warnings.warn("treated as error", RuntimeWarning)
