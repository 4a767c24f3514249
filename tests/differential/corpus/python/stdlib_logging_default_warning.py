import logging

logging.info("not shown")
logging.warning("shown on stderr")
logging.error("error %s", "code 7")
