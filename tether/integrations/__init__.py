"""tether in the slots agent frameworks have for running a model's code, and
on engines that run it elsewhere (Ray, Kubernetes).

One module per framework or engine, each importing it when it is itself
imported (``import tether`` never imports one); each is an optional extra
(``pip install "./tether[pydantic-ai]"`` from a checkout). :mod:`._common` holds what the
framework integrations share: the ``run_code`` tool's schema and
description, and the text a run gives back to the model.
"""
