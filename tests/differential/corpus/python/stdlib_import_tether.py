import tether
