import logging
import sys

logger = logging.getLogger("report")
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("[%(levelname)s] %(funcName)s: %(message)s"))
logger.addHandler(handler)
logger.setLevel(logging.DEBUG)


def process():
    logger.debug("processing")
    logger.info("done")


process()
