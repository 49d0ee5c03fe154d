"""Two colour PFM answers compared (issue40_s8.sh, issue40_s9.sh): prints "LABEL: max |a-b| X,
rel_l2 Y". usage: python3 bench/probes/pfm_diff.py A.pfm B.pfm LABEL"""
import sys

import numpy as np


def read(path):
    d = open(path, "rb").read().split(b"\n", 3)
    w, h = map(int, d[1].split())
    return np.frombuffer(d[3][: w * h * 3 * 4], dtype="<f4").astype(np.float64)


a, b = read(sys.argv[1]), read(sys.argv[2])
print("%s: max |a-b| %.3g, rel_l2 %.3g" % (sys.argv[3], np.abs(a - b).max(),
                                          np.sqrt(((a - b) ** 2).sum() / (b ** 2).sum())))
