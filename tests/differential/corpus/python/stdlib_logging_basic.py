import logging

logging.basicConfig(level=logging.INFO, format="%(levelname)s:%(name)s:%(message)s")
log = logging.getLogger("app")
log.debug("hidden")
log.info("started with %d workers", 4)
log.warning("disk at %s%%", 91)
try:
    1 / 0
except ZeroDivisionError:
    log.exception("computation failed")
