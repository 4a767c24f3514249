"""tether in the slots agent frameworks have for running a model's code.

One module per framework, each importing its framework when it is itself
imported (``import tether`` never imports a framework); each framework is an
optional extra (``pip install tether[pydantic-ai]``). :mod:`._common` holds
what they share: the ``run_code`` tool's schema and description, and the
text a run gives back to the model.
"""
